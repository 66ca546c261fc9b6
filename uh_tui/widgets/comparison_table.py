"""A mission's runtimes side by side: status, exit, duration, diff hash, sandbox."""

from __future__ import annotations

from rich.text import Text

from uh_core.workspace.state import RuntimeView
from uh_tui import look
from uh_tui.widgets.keyed_table import KeyedTable, Row


class ComparisonTable(KeyedTable):
    COLUMNS = (
        ("runtime", "runtime"),
        ("status", "status"),
        ("role", "verdict"),
        ("exit", "exit"),
        ("duration", "duration"),
        ("hash", "diff hash"),
        ("files", "files"),
        ("sandbox", "sandbox"),
    )
    FLEX = "sandbox"
    SHRINK = ("files", "duration", "hash", "runtime")

    def show(self, runtimes: tuple[RuntimeView, ...]) -> None:
        self.set_rows([_row(r) for r in runtimes])


def _row(r: RuntimeView) -> Row:
    style = look.GROUP_STYLES[r.group % len(look.GROUP_STYLES)] if r.group is not None else "dim"
    status = look.status(r.status)
    if r.status == "running":
        status = Text("● running", style="bold cyan")
    return (
        r.runtime,
        (
            Text(r.runtime, style="bold"),
            status,
            look.status(r.role) if r.role else Text(""),
            "" if r.exit_code is None else str(r.exit_code),
            look.duration(r.duration_ms) if r.status != "running" else "",
            Text(r.diff_hash or "-", style=style),
            str(len(r.touched) or r.files_changed or ""),
            Text(r.sandbox or "-", style="dim"),
        ),
    )
