"""The message log (``m``): every message the status line showed, in full and in order, with
each launched command's whole output (its stdout and stderr) under the line that said how
it ended. Long lines wrap; nothing is cut but a command's output over ``MAX_OUTPUT``."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Header, RichLog

from uh_tui.launch import LaunchResult
from uh_tui.widgets.footer import UhFooter


@dataclass(frozen=True)
class Note:
    """One message: when (``HH:MM:SS``), what the status line said, and the launch it was
    about, if any (its command and output)."""

    at: str
    text: Text
    result: LaunchResult | None = None


def render(note: Note) -> RenderableType:
    body: list[RenderableType] = [_fold(note.text)]
    result = note.result
    if result is not None:
        launch = result.launch
        exit_text = "left running" if result.detached else f"exit {result.returncode}"
        if result.returncode is None and not result.detached:
            exit_text = "did not start"
        body.append(_fold(Text(f"$ {launch.command}   ({exit_text})", style="dim")))
        for name, output in (("stdout", result.stdout), ("stderr", result.stderr)):
            if output.strip():
                body.append(Text(name, style="bold dim"))
                body.append(_fold(Text(output.rstrip("\n"))))
        if not (result.stdout.strip() or result.stderr.strip()) and not result.detached:
            body.append(Text("(no output)", style="dim"))
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(no_wrap=True, style="dim")
    grid.add_column(ratio=1, overflow="fold")
    grid.add_row(note.at, Group(*body))
    return grid


def _fold(text: Text) -> Text:
    """Wrap at spaces, and fold a word longer than the line (a path) instead of cutting it."""
    text = text.copy()
    text.overflow = "fold"
    return text


class MessagesScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", id="app.back"),
        Binding("end", "newest", "Newest", id="messages.newest", show=False),
    ]

    def __init__(self, notes: list[Note]) -> None:
        super().__init__()
        self.notes = notes

    def compose(self) -> ComposeResult:
        yield Header()
        yield RichLog(id="messages-log", wrap=True, markup=False, highlight=False, min_width=20)
        yield UhFooter()

    def on_mount(self) -> None:
        self.sub_title = "messages"
        log = self.query_one("#messages-log", RichLog)
        log.border_title = "messages · newest last · each command's full output"
        if not self.notes:
            log.write(Text("no messages yet", style="dim"))
        for note in self.notes:
            log.write(render(note))
        log.focus()

    def add(self, note: Note) -> None:
        """A new message while the log is open."""
        self.query_one("#messages-log", RichLog).write(render(note))

    def action_newest(self) -> None:
        self.query_one("#messages-log", RichLog).scroll_end(animate=False)
