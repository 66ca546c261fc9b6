"""``q`` while launched commands still run: leave them running (each is its own session and
goes on without the dashboard; the next ``uh`` follows them in the logs) or cancel them
(interrupted as Ctrl-C would), or stay. Either answer lets the app go within a second."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

LEAVE, CANCEL = "leave", "cancel"


class QuitScreen(ModalScreen[str | None]):
    BINDINGS = [
        Binding("l", "answer('leave')", "Leave running", id="quit.leave"),
        Binding("c", "answer('cancel')", "Cancel them", id="quit.cancel"),
        Binding("escape", "answer(None)", "Stay", id="quit.stay"),
        Binding("q", "answer('leave')", "Leave running", id="quit.again", show=False),
    ]

    def __init__(self, commands: list[str]) -> None:
        super().__init__()
        self.commands = commands

    def compose(self) -> ComposeResult:
        count = len(self.commands)
        what = "a command is" if count == 1 else f"{count} commands are"
        with Vertical(id="quit-box"):
            yield Static(Text(f"Quit? {what} still running:", style="bold"), id="quit-question")
            yield Static(
                Text("\n".join(f"▶ {command}" for command in self.commands), style="cyan"),
                id="quit-commands",
            )
            yield Static(
                "Leave running: it goes on by itself; the next uh shows it live. "
                "Cancel: it is interrupted (as Ctrl-C would) and records what it did.",
                id="quit-detail",
            )
            with Horizontal(id="quit-buttons"):
                yield Button("Leave running (l)", variant="primary", id="quit-leave")
                yield Button("Cancel (c)", variant="error", id="quit-cancel")
                yield Button("Stay (esc)", id="quit-stay")

    def on_mount(self) -> None:
        self.query_one("#quit-leave", Button).focus()

    def action_answer(self, answer: str | None) -> None:
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        answer = (event.button.id or "").removeprefix("quit-")
        self.dismiss(answer if answer in (LEAVE, CANCEL) else None)
