"""Pick one of a few things (a runtime to run on, a sandbox to discard): enter picks,
escape cancels."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from uh_core.workspace.state import RuntimeOption

READY = "✓ ready"
MISSING = "✗"


def runtime_options(root: Path, runtimes: Sequence[RuntimeOption]) -> list[tuple[str, str, bool]]:
    """The ``r`` picker's rows: each runtime with ``adapter list``'s mark — whether it can
    run here (its CLI on PATH, …), read through uh_core — and why not. A runtime whose
    manifest does not load cannot be picked; a missing one can (the run says what failed)."""
    from uh_core.workspace.runtimes_here import runtimes_here

    try:
        here = runtimes_here(root)
    except Exception:  # the picker opens whatever the manifests hold
        here = {}
    options = []
    for option in runtimes:
        label = f"{option.id:<14} {option.kind or '?':<10} {option.status:<12}"
        found = here.get(option.id)
        if option.problem:
            label += f"  ⚠ {option.problem}"
        elif found is not None:
            label += f"  {READY}" if found.ok else f"  {MISSING} {found.short or found.reason}"
        options.append((option.id, label, option.problem is None))
    return options


class PickerScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="picker.cancel")]

    def __init__(self, title: str, options: list[tuple[str, str, bool]]) -> None:
        """``options``: (id, label, enabled)."""
        super().__init__()
        self.title_text = title
        self.options = options

    def compose(self) -> ComposeResult:
        with Vertical(id="picker-box"):
            yield Static(self.title_text, id="picker-title")
            yield OptionList(
                *(
                    Option(label, id=key, disabled=not enabled)
                    for key, label, enabled in self.options
                ),
                id="picker-options",
            )

    def on_mount(self) -> None:
        self.query_one("#picker-options", OptionList).focus()

    @on(OptionList.OptionSelected, "#picker-options")
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)
