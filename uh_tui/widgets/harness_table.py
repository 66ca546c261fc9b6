"""The harness loop per mission: outcome, attempts, failing stage, branch, budget, history."""

from __future__ import annotations

from rich.text import Text

from uh_core.workspace.state import RequirementView
from uh_tui import look
from uh_tui.widgets.keyed_table import KeyedTable, Row

HISTORY = 12  # outcomes shown per mission, newest last


class HarnessTable(KeyedTable):
    COLUMNS = (
        ("mission", "mission"),
        ("outcome", "outcome"),
        ("attempts", "attempts"),
        ("stage", "failing stage"),
        ("branch", "branch"),
        ("budget", "budget used"),
        ("history", "runs"),
        ("reason", "reason"),
    )
    MAX_WIDTHS = {"branch": 24, "budget": 16}
    FLEX = "reason"
    SHRINK = ("branch", "budget", "history", "stage", "mission")

    def show(self, requirements: list[RequirementView]) -> None:
        self.set_rows([_row(r) for r in requirements])


def _row(r: RequirementView) -> Row:
    attempts = f"{r.attempts}/{r.max_attempts}" if r.max_attempts else str(r.attempts or "-")
    outcome = look.badge(r.outcome) if r.outcome != "running" else look.live("running")
    history = Text()
    for item in r.history[-HISTORY:]:
        history.append_text(look.outcome_glyph(item))
    if r.outcome == "running":
        history.append_text(look.outcome_glyph("running"))
    return (
        r.mission_id,
        (
            Text(r.mission_id, style="bold"),
            outcome,
            attempts,
            Text(r.failing_stage or "-", style="red" if r.failing_stage else "dim"),
            Text(r.branch or "-"),
            r.budget,
            history,
            Text(look.short(r.reason, 40), style="dim"),
        ),
    )
