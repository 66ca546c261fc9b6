"""The ``uh`` app: screens over what uh_core writes, refreshed on a timer."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.app import App
from textual.binding import Binding

from uh_tui.screens.dashboard import DashboardScreen
from uh_tui.screens.no_harness import NoHarnessScreen
from uh_tui.snapshot import read_snapshot

REFRESH_S = 0.5


class UhApp(App[str | None]):
    CSS_PATH = "app.tcss"
    TITLE = "uh · Mission Control"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("ctrl+r", "reload", "Reload", id="app.reload", show=False),
    ]

    def __init__(self, root: Path, *, once: str | None = None) -> None:
        super().__init__()
        self.root = root
        self.once = once  # "text" or "svg": render one frame, then exit with it

    def on_mount(self) -> None:
        snapshot = read_snapshot(self.root)
        if snapshot.has_harness:
            self.push_screen(DashboardScreen(snapshot))
            if self.once is None:
                self.set_interval(REFRESH_S, self.action_reload)
        else:
            self.push_screen(NoHarnessScreen(self.root))
        if self.once is not None:
            self.call_after_refresh(self._exit_with_frame)

    def action_reload(self) -> None:
        if isinstance(self.screen, DashboardScreen):
            self.screen.refresh_from_disk()

    def _exit_with_frame(self) -> None:
        self.exit(self.export_svg() if self.once == "svg" else self.export_text())

    def export_text(self) -> str:
        """The current frame as plain text (export_screenshot's rendering, as text)."""
        width, height = self.size
        console = Console(
            width=width,
            height=height,
            file=io.StringIO(),
            record=True,
            legacy_windows=False,
            safe_box=False,
            color_system=None,
        )
        console.print(self.screen._compositor.render_update(full=True))
        lines = console.export_text().splitlines()
        return "\n".join(line.rstrip() for line in lines) + "\n"

    def export_svg(self) -> str:
        return self.export_screenshot()
