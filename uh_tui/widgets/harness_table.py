"""The harness loop per mission: outcome, attempts, failing stage, branch, budget, history,
and the reason on one line, as wide as the pane allows (the column takes the width left
over); the selected mission's whole reason, notes and rounds are in ``HarnessDetail``."""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

from uh_core.workspace.state import RequirementView
from uh_tui import look
from uh_tui.widgets.keyed_table import KeyedTable, LazyRows, Row

HISTORY = 12  # outcomes shown per mission, newest last
REASON = 400  # characters of a reason put in its cell (the column cuts it to its width)


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

    def show(
        self, requirements: list[RequirementView], seen: Mapping[str, str | None] | None = None
    ) -> None:
        """``seen``: mission → when its interrupted harness run was last seen alive."""
        seen = seen or {}
        self.set_rows(
            LazyRows(
                [r.mission_id for r in requirements],
                lambda i: _row(requirements[i], seen.get(requirements[i].mission_id)),
            )
        )


def _reason(r: RequirementView, seen: str | None) -> Text:
    if r.outcome == "interrupted":  # its runner died: when it was last seen comes first
        why = look.short(f"{look.last_seen(seen)} · {r.reason or ''}", REASON)
        return Text(why, style="yellow")
    if r.outcome == "needs review":  # green, but a human reads these lines before trusting it
        return Text(look.short(r.reason, REASON), style="yellow")
    return Text(look.short(r.reason, REASON), style="dim")


def _row(r: RequirementView, seen: str | None = None) -> Row:
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
            _reason(r, seen),
        ),
    )
