"""A mission's acceptance criteria, live: id, severity, status, duration, exit code.

Every value from the mission's files is clipped (``uh_core.shown.clip``) before it becomes a
cell: a row costs the same whatever the file holds."""

from __future__ import annotations

from rich.text import Text

from uh_core.shown import clip
from uh_core.workspace.state import CriterionView
from uh_tui import look
from uh_tui.widgets.keyed_table import KeyedTable, Row

ID_CHARS = 80  # an id in a cell (the file allows any length)
WORD_CHARS = 20  # a severity or a status word


class CriteriaTable(KeyedTable):
    COLUMNS = (
        ("id", "criterion"),
        ("severity", "severity"),
        ("status", "status"),
        ("duration", "duration"),
        ("exit", "exit"),
        ("flags", "flags"),  # labelled: "synthetic" is not the exit code's
    )
    SHRINK = ("flags", "duration", "severity", "id")  # the id gives way last

    def show(self, criteria: tuple[CriterionView, ...]) -> None:
        self.set_rows([_row(c) for c in criteria])


def _row(c: CriterionView) -> Row:
    marks = (("synthetic", c.synthetic), ("flaky", c.flaky), ("degraded", bool(c.degraded)))
    flags = [f for f, on in marks if on]
    if c.timed_out:
        flags.append("timed out")
    status = look.status(clip(c.status, WORD_CHARS))
    if c.status == "running":
        status = Text("● running", style="bold cyan")
    return (
        c.ac_id,
        (
            Text(clip(c.ac_id, ID_CHARS)),
            Text(clip(c.severity, WORD_CHARS), style="bold" if c.severity == "block" else "dim"),
            status,
            look.duration(c.duration_ms) if c.status not in ("pending", "running", "-") else "",
            "" if c.exit_code is None else str(c.exit_code),
            Text(", ".join(flags), style="yellow"),
        ),
    )
