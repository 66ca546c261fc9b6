"""Shown when the root has no ``.harness/``: what to run to get one."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import Static

from uh_tui.widgets.footer import UhFooter


class NoHarnessScreen(Screen[None]):
    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    def compose(self) -> ComposeResult:
        with Middle(), Center():
            yield Static(
                f"No .harness/ in {self.root}\n\n"
                f"Run  uh-core init --root {self.root}  to create one,\n"
                "or  uh demo  to open a ready-made demo workspace.",
                id="no-harness",
            )
        yield UhFooter()
