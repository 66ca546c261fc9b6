"""Pick one of a few things (a runtime to run on, a sandbox to discard): enter picks,
escape cancels."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


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
