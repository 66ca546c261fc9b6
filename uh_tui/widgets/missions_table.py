"""The missions table: id, status, last verdict, criteria, title."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from uh_tui.snapshot import MissionRow

VERDICT_STYLE = {
    "passed": "bold green",
    "failed": "bold red",
    "blocked": "bold yellow",
    "running": "bold cyan",
    "unreadable": "red",
}


class MissionsTable(DataTable[Text | str]):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_columns("mission", "status", "verdict", "ACs", "title")

    def show(self, rows: list[MissionRow]) -> None:
        selected = self.cursor_row
        self.clear()
        for row in rows:
            verdict = Text(row.verdict, style=VERDICT_STYLE.get(row.verdict, "dim"))
            title = Text(row.error, style="red") if row.error else Text(row.title)
            self.add_row(
                row.mission_id, row.status, verdict, str(row.criteria), title, key=row.mission_id
            )
        if rows:
            self.move_cursor(row=min(selected, len(rows) - 1))
