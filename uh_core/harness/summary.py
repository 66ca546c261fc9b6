"""The end-of-run summary: one line per mission, totals with the pass rate
(``uh_core.harness.rate``), and the reviewer's next step: the promote command of each
mission that passed (``next_steps``), nothing to promote when none did."""

from __future__ import annotations

from typing import Any

from uh_core.harness.rate import tally
from uh_core.judge.scan import headline, review_count
from uh_core.models.ledger import Handover, HarnessLedger, RequirementRecord, fail_to_pass_of
from uh_core.shown import clip

NOTHING_TO_PROMOTE = "nothing to promote: no mission passed"
_BADGE = {
    "pass": "PASS", "fail": "FAIL", "skipped": "SKIPPED", "error": "ERROR", "blocked": "BLOCKED",
    "budget_exhausted": "BUDGET", "rate_limited": "RATE LIMITED", "interrupted": "INTERRUPTED",
}  # fmt: skip
REVIEW_SHOWN = 10  # review lines listed under a mission; the ledger holds them all


def needs_review(record: RequirementRecord) -> bool:
    """Green, but its diff has lines with a shape of judge tampering (uh_core.judge.scan)."""
    return record.outcome == "pass" and bool(record.review)


def render(ledger: HarnessLedger, ledger_file: str) -> str:
    lines = [f"harness run {ledger.run_id} ({ledger.status})"]
    for how in ledger.isolation:
        if how != "bwrap":
            lines.append(f"UNCONFINED: agents ran without isolation ({how.removeprefix('none: ')})")
    if ledger.settings.trust_workers:
        lines.append("TRUSTED WORKERS: Ray workers' greens were not judged again on the head")
    if ledger.tampered:
        lines.append(
            "TAMPERED: an agent changed the operator's repository; the run stopped and nothing "
            "was repaired — inspect these before anything else:"
        )
        lines += [f"    {change}" for change in ledger.tampered[:50]]
    for record in ledger.requirements:
        if needs_review(record):
            lines.append(f"NEEDS REVIEW: {record.mission_id}: {headline(record.review)}")
    if not ledger.requirements:
        lines.append("nothing to do: no pending mission")
    width = max((len(r.mission_id) for r in ledger.requirements), default=0)
    max_attempts = ledger.settings.max_attempts
    for record in ledger.requirements:
        badge = "NEEDS REVIEW" if needs_review(record) else _BADGE[record.outcome]
        line = f"[{badge}] {record.mission_id:<{width}}"
        if record.handover is not None:
            line += f"  attempts {len(record.attempts)}/{max_attempts}  branch {record.branch}"
            line += f"  {record.reason or ''}"
        elif record.outcome in ("skipped", "blocked"):
            line += f"  {record.reason or ''}"
        elif record.outcome in ("budget_exhausted", "rate_limited"):
            line += f"  attempts {len(record.attempts)}/{max_attempts}  {record.reason or ''}"
        elif record.outcome == "error":
            line += f"  branch {record.branch}  {record.reason or 'error'}"
        else:
            line += f"  attempts {len(record.attempts)}/{max_attempts}  branch {record.branch}"
            if record.outcome == "fail" and record.failing_stage:
                line += f"  failed at {record.failing_stage}"
                if record.reason:
                    line += ": " + record.reason.removeprefix(f"red at {record.failing_stage}: ")
            elif record.outcome in ("fail", "interrupted"):
                line += f"  {record.reason or record.outcome}"
        lines.append(line.rstrip())
        if record.node:
            lines.append(f"    ran on {record.node}")
        if record.handover is not None:
            lines += handover_lines(record.handover)
        lines += [f"    {note}" for note in notes(record)]
    totals = ledger.totals
    counts = tally(r.outcome for r in ledger.requirements)
    review = sum(1 for r in ledger.requirements if needs_review(r))
    lines.append(
        f"totals: {counts.passed} passed"
        + (f" ({review} need review)" if review else "")
        + f", {counts.failed} failed, {counts.skipped} skipped"
        + (f", {counts.errors} error(s)" if counts.errors else "")
        + (f", {counts.blocked} blocked" if counts.blocked else "")
        + (f", {counts.budget_exhausted} over budget" if counts.budget_exhausted else "")
        + (f", {counts.rate_limited} rate limited" if counts.rate_limited else "")
        + (f", {counts.interrupted} interrupted" if counts.interrupted else "")
        + f"; pass rate {counts.text()}; "
        f"{totals.attempts} attempt(s) in {totals.duration_ms / 1000:.1f} s"
    )
    if ledger.stopped:
        lines.append(f"stopped: {ledger.stopped}")
    budget = ledger.budget
    if budget.get("budget_seconds") is not None or budget.get("max_requirements") is not None:
        limits = []
        if budget.get("budget_seconds") is not None:
            limits.append(f"{budget.get('elapsed_s') or 0:.1f} s of {budget['budget_seconds']:g} s")
        if budget.get("max_requirements") is not None:
            limit = budget["max_requirements"]
            noun = "mission" if limit == 1 else "missions"  # agrees with the limit: 0 of 1 mission
            limits.append(f"{budget.get('started') or 0} of {limit} {noun}")
        lines.append("budget used: " + ", ".join(limits))
    lines += spend_lines(ledger)
    lines.append(f"ledger: {ledger_file}")
    lines += next_steps(ledger)
    return "\n".join(lines)


def spend_lines(ledger: HarnessLedger) -> list[str]:
    """``tokens: …; cost: …`` for the run (nothing when no agent reported usage and no
    budget_usd was set)."""
    run = ledger.usage.get("run") or {}
    budget = ledger.settings.budget_usd
    if not run.get("models") and budget is None:
        return []
    tokens = (
        f"tokens: {run.get('input_tokens', 0)} in ({run.get('cache_read_tokens', 0)} cache read, "
        f"{run.get('cache_write_tokens', 0)} cache write), {run.get('output_tokens', 0)} out"
    )
    cost = run.get("cost_usd")
    shown = (
        f"${cost:.4f}"
        if cost is not None
        else "cost unknown: " + "; ".join(run.get("cost_unknown") or ["no attempt"])
    )
    if budget is not None:
        shown += f" of budget_usd ${budget:g}"
    return [f"{tokens}; {'cost ' if cost is not None else ''}{shown}"]


def notes(record: RequirementRecord) -> list[str]:
    """What the reviewer reads under a mission's line (the dashboard's harness detail too):
    unverified promises, degraded evidence, warnings, review lines, findings."""
    # a human answered the hand-over these rounds continued: the reviewer sees the hint
    lines = [
        f"answered by {a.by or 'the operator'}: {clip(' '.join(a.answer.split()), 300)}"
        for a in record.answers
    ]
    for attempt in record.attempts:  # a human steered the agent at work
        steered = attempt.agent.steered if attempt.agent is not None else []
        lines += [
            f"steered by {s.by or 'the operator'} (round {attempt.attempt}): "
            f"{clip(' '.join(s.message.split()), 300)}"
            for s in steered
        ]
    lines += [
        f"steering not delivered ({s.by or 'the operator'}): "
        f"{clip(' '.join(s.message.split()), 300)}"
        for s in record.steering_left
    ]
    if record.human_lines and record.sandbox_id:  # the judged tree holds a human's lines
        lines.append(
            f"human: {record.human_lines} line(s) of its tree were changed by hand "
            f"(uh-core sandbox shell; .harness/sandboxes/{record.sandbox_id}/human.json)"
        )
    if record.promotion is not None:  # --promote-green
        done = record.promotion
        lines.append(
            f"promoted onto {done.onto} as {(done.commit or '')[:12]} (--promote-green, "
            f"approved by {done.approved_by})"
            if done.commit
            else f"warning: not promoted by --promote-green: {done.refused}"
        )
    lines += [f"unverified promise (blocked): {promise}" for promise in record.promises]
    lines += [f"degraded: {residual}" for residual in record.residuals]
    lines += [f"warning: ran although not ready: {warning}" for warning in record.warnings]
    lines += [
        f"parked: attempt {p.get('attempt')} rate limited on {p.get('runtime')}; "
        f"waited until {p.get('until')}"
        for p in record.parked
    ]
    lines += [f"fallback: {line}" for line in record.fallbacks]
    if needs_review(record):
        listed = [r for r in record.review[:REVIEW_SHOWN] if not r.startswith("…")]
        lines += [f"review: {item}" for item in listed]
        rest = review_count(record.review) - len(listed)
        if rest > 0:
            lines.append(f"review: … {rest} more line(s): see the ledger")
    if record.outcome != "skipped":
        lines += [f"{f.severity}: {f.code}: {f.message}" for f in record.findings]
    proof = fail_to_pass_of(record.attempts[-1].stages) if record.attempts else None
    if proof is not None:
        lines.append(proof.line())
    return lines


def promote_command(record: RequirementRecord) -> str:
    """How a human lands a mission that passed: ``uh-core promote`` records the decision
    (the harness never merges)."""
    return f"uh-core promote {record.mission_id} --branch {record.branch} --approved-by NAME"


def next_steps(ledger: HarnessLedger) -> list[str]:
    """The closing lines: the promote command of each mission that passed (``p`` on its row
    in ``uh`` does the same); when none passed, that there is nothing to promote. The last
    line is what the dashboard's status line shows after the run."""
    if ledger.tampered:
        return ["promote nothing before the changes listed under TAMPERED are inspected"]
    green = [r for r in ledger.requirements if r.outcome == "pass"]
    landed = [r for r in green if r.promotion is not None and r.promotion.commit]
    passed = [r for r in green if r not in landed]  # still waiting for a human's decision
    if landed and not passed:
        return [f"promoted by --promote-green: {', '.join(r.mission_id for r in landed)}"]
    if not passed:
        return [NOTHING_TO_PROMOTE]
    review = " (read its review lines first; --accept-review lands them)"
    if len(passed) == 1:
        [record] = passed
        note = review if needs_review(record) else ""
        return [f"next: review, then {promote_command(record)} (or p in uh){note}"]
    lines = [f"next: review, then promote each of the {len(passed)} missions that passed (or p "
             "on its row in uh):"]  # fmt: skip
    for record in passed:
        lines.append(f"  {promote_command(record)}" + (review if needs_review(record) else ""))
    return lines


def handover_lines(handover: Handover, indent: str = "    ") -> list[str]:
    """The rounds as the human taking over reads them: hypothesis, scope, verdict, prompt."""
    lines = []
    for r in handover.rounds:
        added = sum(f.added for f in r.files)
        removed = sum(f.removed for f in r.files)
        scope = ", ".join(f"{f.path} +{f.added} -{f.removed}" for f in r.files[:5])
        scope += " …" if len(r.files) > 5 else ""
        failed = [f"{k} {v}" for k, v in r.criteria.items() if v != "passed"]
        lines.append(f"{indent}round {r.round}: {r.verdict}")
        lines.append(f"{indent}  hypothesis: {clip_line(r.hypothesis)}")
        lines.append(
            f"{indent}  change: {len(r.files)} file(s) +{added} -{removed}"
            + (f" ({scope})" if scope else "")
        )
        lines.append(
            f"{indent}  criteria: "
            + (", ".join(failed) if failed else f"all {len(r.criteria)} passed")
        )
        lines.append(f"{indent}  prompt: {r.prompt_file or '-'}")
    return lines


def clip_line(text: str, width: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def as_json(ledger: HarnessLedger, ledger_file: str) -> dict[str, Any]:
    data: dict[str, Any] = ledger.model_dump(mode="json")
    data["ledger"] = ledger_file  # the rest is the ledger as written (totals: the rate's rule)
    return data


def exit_code(ledger: HarnessLedger) -> int:
    """0 when every mission passed (an empty run included); 1 otherwise; 130 interrupted.
    Missions the budget did not reach do not count: running out is not an error."""
    if ledger.status == "tampered":
        return 1
    if ledger.status == "interrupted":
        return 130
    counted = [r for r in ledger.requirements if r.skip_code != "budget"]
    return 0 if all(r.outcome == "pass" for r in counted) else 1
