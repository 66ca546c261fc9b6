"""The answer to a hand-over (``A`` on a mission handed over as blocked): one line of text for
the agent, sent by ``uh-core harness answer ID TEXT``; the next harness run continues the
mission from its last round with it."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from uh_core.shown import LINE, clip

MAX_CHARS = 8000  # what uh-core accepts (uh_core.harness.answer.MAX_CHARS)


class AnswerScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="answer.cancel")]

    def __init__(self, mission_id: str, handover: str, reason: str | None) -> None:
        super().__init__()
        self.mission_id = mission_id
        self.handover = handover
        self.reason = reason

    def compose(self) -> ComposeResult:
        with Vertical(id="answer-box"):
            yield Static(f"Answer {self.mission_id}'s hand-over", id="answer-title")
            yield Static(clip(self.handover, LINE), id="answer-handover")
            if self.reason:
                yield Static(clip(self.reason, LINE), id="answer-reason")
            yield Input(
                placeholder="what the agent should do next (Enter sends, Escape cancels)",
                max_length=MAX_CHARS,
                id="answer-input",
            )

    def on_mount(self) -> None:
        self.query_one("#answer-input", Input).focus()

    @on(Input.Submitted, "#answer-input")
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if text:
            self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)
