"""The ``?`` overlay: every key, what it does, and the binding id to remap it with."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from uh_tui.keymap import KEYMAP_HELP


class HelpScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "dismiss", "Close", id="help.close"),
        Binding("question_mark", "dismiss", "Close", id="help.close_again", show=False),
        Binding("q", "dismiss", "Close", id="help.close_q", show=False),
    ]

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            title = Text("Mission Control — keys", style="bold")
            title.append("   esc closes · ↑↓ scroll", style="dim")
            yield Static(title, id="help-title")
            yield DataTable(id="help-keys", cursor_type="none", zebra_stripes=True)
            yield Static(Text(KEYMAP_HELP, style="dim"), id="help-foot")

    def on_mount(self) -> None:
        table = self.query_one("#help-keys", DataTable)
        table.add_columns("key", "does", "binding id")
        for key, description, binding_id in self.rows:
            table.add_row(Text(key, style="bold"), description, Text(binding_id, style="dim"))
        table.focus()  # ↑↓ scroll it when it is taller than the terminal
