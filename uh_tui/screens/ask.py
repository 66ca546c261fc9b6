"""One line of text for the agent, asked for before a command sends it: the answer to a
hand-over (``A``: ``uh-core harness answer``) or a message to the agent at work (``s``:
``uh-core mission steer``). Enter sends, Escape cancels."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from uh_core.shown import LINE, clip

MAX_CHARS = 8000  # what uh-core accepts (an answer's, a steering message's limit)


class AskScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ask.cancel")]

    def __init__(self, title: str, lines: tuple[str, ...], placeholder: str) -> None:
        super().__init__()
        self.title_text = title
        self.lines = lines
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(id="ask-box"):
            yield Static(self.title_text, id="ask-title")
            for line in self.lines:
                yield Static(clip(line, LINE), classes="ask-line")
            yield Input(placeholder=self.placeholder, max_length=MAX_CHARS, id="ask-input")

    def on_mount(self) -> None:
        self.query_one("#ask-input", Input).focus()

    @on(Input.Submitted, "#ask-input")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text:
            self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)
