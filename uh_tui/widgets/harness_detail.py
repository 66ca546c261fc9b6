"""The selected harness mission, whole: its outcome, the reason and its fix (never cut to a
column), what the summary lists under it (promises, degraded evidence, warnings, findings),
the rounds it was handed over with, and the next step — for a mission that passed, the
command that promotes it (``p`` does it here).

Everything shown is what ``uh-core harness run`` wrote to its ledger, as
``uh_core.workspace`` reads it (``RequirementView``); every value is clipped
(``uh_core.shown``) before Rich sees it."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from uh_core.shown import LINE, clip
from uh_core.workspace.state import PromotionView, RequirementView
from uh_tui import look

MAX_LINES = 400  # lines of notes and rounds shown (the ledger and the summary hold them all)


def describe(
    r: RequirementView | None,
    seen: str | None = None,
    decided: PromotionView | None = None,
    answers: tuple[str, ...] = (),
) -> Group | Text:
    if r is None:
        return Text("No mission selected.", style="dim")
    head = Text(clip(r.mission_id, 80), style="bold")
    head.append("  ")
    head.append_text(look.badge(r.outcome) if r.outcome != "running" else look.live("running"))
    facts = []
    if r.max_attempts:
        facts.append(f"attempts {r.attempts}/{r.max_attempts}")
    elif r.attempts:
        facts.append(f"attempts {r.attempts}")
    if r.failing_stage:
        facts.append(f"failed at {clip(r.failing_stage, 80)}")
    if r.tokens:  # what its agents reported in that run, and its cost
        facts.append(f"{r.tokens:,} tokens · {clip(r.cost, 80)}")
    if facts:
        head.append("  " + " · ".join(facts), style="dim")
    parts: list[Text] = [head]
    if r.outcome == "interrupted":
        parts.append(Text(look.last_seen(seen), style="yellow"))
    if r.reason:
        label = "review" if r.outcome == "needs review" else "reason"
        style = "yellow" if r.outcome in ("needs review", "interrupted") else ""
        line = Text(f"{label}: ", style="bold")
        line.append(clip(r.reason, LINE), style=style)
        parts.append(line)
    lines = [*r.notes, *r.handover]
    for note in lines[:MAX_LINES]:
        parts.append(Text(clip(note, LINE), style=_tone(note)))
    if len(lines) > MAX_LINES:
        parts.append(Text(f"… {len(lines) - MAX_LINES} more line(s): see the ledger", "dim"))
    step = _decided(r, decided) or _next(r, answers)
    if step is not None:
        parts.append(step)
    where = [f"branch {clip(r.branch, 120)}"] if r.branch else []
    where += [f"run {clip(r.run_id, 80)}"] if r.run_id else []
    if where:
        parts.append(Text(" · ".join(where), style="dim"))
    return Group(*parts)


def _tone(line: str) -> str:
    if line.startswith(("error:", "unverified promise")):
        return "red"
    if line.startswith(("warning:", "degraded:", "review:")):
        return "yellow"
    if line.startswith("round "):
        return "bold"
    return ""


def _decided(r: RequirementView, decided: PromotionView | None) -> Text | None:
    """The decision already taken on this mission's branch (``promotion.yaml``), which
    replaces the advice to promote it."""
    if decided is None or not r.branch or decided.source != f"branch {r.branch}":
        return None
    who = clip(decided.approved_by, 80)
    if decided.decision == "promoted":
        line = Text("promoted: ", style="bold green")
        commit = f" as {decided.commit[:12]}" if decided.commit else ""
        line.append(f"landed{commit} by {who}, {look.ago(decided.promoted_at)}")
        return line
    line = Text(f"{clip(decided.decision, 40)}: ", style="bold yellow")
    line.append(f"by {who}, {look.ago(decided.promoted_at)} — p to decide again")
    return line


def _next(r: RequirementView, answers: tuple[str, ...] = ()) -> Text | None:
    if r.promote:
        line = Text("next: ", style="bold green")
        line.append("review, then p (or ")
        line.append(clip(r.promote, LINE), style="bold")
        line.append(")")
        return line
    if r.outcome == "blocked" and r.handover and answers:
        line = Text("answered: ", style="bold green")
        line.append("the next harness run continues from the last round with ")
        line.append("; ".join(clip(a, 200) for a in answers[:3]), style="bold")
        return line
    if r.outcome == "blocked" and r.handover:
        line = Text("next: ", style="bold yellow")
        line.append("handed over to a human — the rounds above say what was tried; A answers ")
        line.append(f'(uh-core harness answer {clip(r.mission_id, 80)} "…")', style="bold")
        line.append(", and the next harness run continues from the last round")
        return line
    return None


class HarnessDetail(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static(id="harness-detail-text")

    def show(
        self,
        requirement: RequirementView | None,
        seen: str | None = None,
        decided: PromotionView | None = None,
        answers: tuple[str, ...] = (),
    ) -> None:
        text = describe(requirement, seen, decided, answers)
        self.query_one("#harness-detail-text", Static).update(text)
