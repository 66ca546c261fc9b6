"""``harness report``: what the loop has cost and where it fails, over every ledger.

Read from ``.harness/runs/*.json``; nothing here changes a file except a
false-failure mark, one JSON object appended to ``.harness/false-failures.jsonl``.

- **Where attempts end**: per attempt, the stage that turned it red (``pass`` when green,
  ``interrupted``/``error`` when no verdict was reached).
- **Missions that spent every attempt and delivered nothing**: failed records with as many
  attempts as the run allowed and no commit.
- **Pass rate per run**, oldest first, as a small text chart: ``uh_core.harness.rate``'s rule
  (passed / judged; blocked missions count against it; a run that judged nothing has none).
- **Cost**: *declared* = attempts × the profile's ``cost_per_run_hint``; attempts of
  profiles without a hint (and of the run's default agent) are counted apart, so a total is
  never shown as complete when it is not. *Measured*: the tokens each attempt's agent
  reported and their cost at the run's ``pricing:``, per runtime and per passed mission.
- **False failures**: marks apply to the mission (every run), with a reason
  (``uh_core.harness.marks``).
- **Handed over to a human**, and the **same-cause sweep** (``uh_core.harness.same_cause``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from uh_core.harness.costs import cost_of
from uh_core.harness.ledger import read_all
from uh_core.harness.marks import read_marks
from uh_core.harness.rate import percent, tally
from uh_core.harness.same_cause import same_cause
from uh_core.harness.summary import handover_lines, needs_review
from uh_core.judge.scan import headline
from uh_core.layout import Layout
from uh_core.models.ledger import AttemptRecord, HarnessLedger, RequirementRecord, fail_to_pass_of
from uh_core.models.usage import merge, token_totals

BAR_WIDTH = 20


def _attempt_end(outcome: str, stage: str | None) -> str:
    if outcome == "pass":
        return "pass"
    if outcome == "fail":
        return stage or "unknown"
    return outcome  # interrupted, error: no verdict


def _agent_name(attempt: AttemptRecord) -> str:
    """The runtime that ran it, and its profile when it had one (``--agent`` commands are
    all the runtime ``agent``: their profiles tell them apart)."""
    runtime = attempt.agent.runtime if attempt.agent is not None else "?"
    return f"{runtime} (profile {attempt.profile})" if attempt.profile else runtime


def _measured(ledgers: list[HarnessLedger]) -> dict[str, Any]:
    """Tokens and cost per runtime from the ledgers (each attempt priced when it ran), and
    per passed mission: which agent is cheapest on this repository."""
    attempts = [a for ledger in ledgers for r in ledger.requirements for a in r.attempts]
    usage = merge(u for a in attempts for u in a.usage)
    runtimes: dict[str, dict[str, Any]] = {}
    for ledger in ledgers:
        for record in ledger.requirements:
            for attempt in record.attempts:
                entry = runtimes.setdefault(_agent_name(attempt), {"attempts": [], "passed": 0})
                entry["attempts"].append(attempt)
            if record.outcome == "pass" and record.attempts:
                runtimes[_agent_name(record.attempts[-1])]["passed"] += 1
    by_runtime: dict[str, dict[str, Any]] = {}
    for name, entry in runtimes.items():
        spent = entry["attempts"]
        tokens = token_totals(u for a in spent for u in a.usage)
        cost = cost_of(spent)
        passed = entry["passed"]
        per_pass = None
        if passed and cost.usd is not None and any(a.usage for a in spent):
            per_pass = round(cost.usd / passed, 6)
        by_runtime[name] = {
            "attempts": len(spent),
            **tokens,
            "cost_usd": None if cost.usd is None else round(cost.usd, 6),
            "cost_unknown": cost.unknown,
            "passed_missions": passed,
            "cost_per_passed_mission": per_pass,
            "tokens_per_passed_mission": (
                (tokens["input_tokens"] + tokens["output_tokens"]) // passed if passed else None
            ),
        }
    priced = {n: e["cost_per_passed_mission"] for n, e in by_runtime.items()}
    known = {n: c for n, c in priced.items() if c is not None}
    return {
        **token_totals(usage),
        "reports": sum(1 for a in attempts if a.usage),
        "by_runtime": by_runtime,
        "cheapest": min(known, key=lambda n: known[n]) if known else None,
    }


def build_report(layout: Layout) -> dict[str, Any]:
    ledgers, unreadable = read_all(layout)
    marks = read_marks(layout)
    marked = {m["mission_id"]: m for m in marks}
    ends: Counter[str] = Counter()
    exhausted: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    by_profile: dict[str, dict[str, Any]] = {}
    unhinted = 0
    failures = failures_marked = 0
    missions: set[str] = set()
    latest: dict[str, tuple[str, RequirementRecord]] = {}  # mission → its newest record
    for ledger in ledgers:
        for record in ledger.requirements:
            missions.add(record.mission_id)
            if record.outcome != "skipped":
                latest[record.mission_id] = (ledger.run_id, record)
            if record.outcome == "fail" or record.handover is not None:  # red, handed over
                failures += 1
                failures_marked += record.mission_id in marked
            for attempt in record.attempts:
                ends[_attempt_end(attempt.outcome, attempt.stage)] += 1
                name = attempt.profile or "(default)"
                entry = by_profile.setdefault(
                    name, {"attempts": 0, "cost_per_run_hint": None, "declared": None}
                )
                entry["attempts"] += 1
                if attempt.cost_per_run_hint is None:
                    unhinted += 1
                else:
                    entry["cost_per_run_hint"] = attempt.cost_per_run_hint
                    entry["declared"] = (entry["declared"] or 0.0) + attempt.cost_per_run_hint
            spent = len(record.attempts) >= ledger.settings.max_attempts
            red = record.outcome == "fail" or record.handover is not None
            if red and record.commit is None and spent and record.attempts:
                exhausted.append(
                    {
                        "run_id": ledger.run_id,
                        "mission_id": record.mission_id,
                        "attempts": len(record.attempts),
                        "max_attempts": ledger.settings.max_attempts,
                        "failing_stage": record.failing_stage,
                        "marked_false": record.mission_id in marked,
                    }
                )
        runs.append(
            {
                "run_id": ledger.run_id,
                "started_at": ledger.started_at,
                "status": ledger.status,
                **tally(r.outcome for r in ledger.requirements).as_dict(),
            }
        )
    attempts_total = sum(ends.values())
    declared = sum(p["declared"] or 0.0 for p in by_profile.values())
    return {
        "runs": len(ledgers),
        "unreadable_ledgers": unreadable,
        "attempts": attempts_total,
        "attempt_ends": dict(sorted(ends.items(), key=lambda kv: (-kv[1], kv[0]))),
        "exhausted": exhausted,
        "handed_over": _handed_over(latest),
        "human": _human(latest),
        "same_cause": same_cause(ledgers),
        "residual_gaps": {
            mission_id: record.residuals
            for mission_id, (_, record) in sorted(latest.items())
            if record.residuals
        },
        "unverified_promises": {
            mission_id: record.promises
            for mission_id, (_, record) in sorted(latest.items())
            if record.promises
        },
        "needs_review": {  # green, with lines that could tamper with the judge
            mission_id: {"run_id": run_id, "review": record.review}
            for mission_id, (run_id, record) in sorted(latest.items())
            if needs_review(record)
        },
        "fail_to_pass": _proofs(latest),
        "pass_rate": runs,
        "cost": {
            "declared": {
                "label": "declared (attempts × cost_per_run_hint)",
                "total": round(declared, 6),
                "attempts_with_hint": attempts_total - unhinted,
                "attempts_without_hint": unhinted,
                "complete": unhinted == 0,
                "by_profile": by_profile,
            },
            "measured": {
                "label": "measured (the tokens agents reported, priced at pricing:)",
                **_measured(ledgers),
            },
        },
        "false_failures": {
            "marks": len(marks),
            "missions": sorted(marked),
            "failures": failures,
            "failures_marked_false": failures_marked,
        },
    }


def _proofs(latest: dict[str, tuple[str, RequirementRecord]]) -> dict[str, Any]:
    """Each mission's proof that its tests test the change (its newest run's last round)."""
    found: dict[str, Any] = {}
    for mission_id, (run_id, record) in sorted(latest.items()):
        proof = fail_to_pass_of(record.attempts[-1].stages) if record.attempts else None
        if proof is not None:
            found[mission_id] = {"run_id": run_id, "line": proof.line(), **proof.model_dump()}
    return found


def _handed_over(latest: dict[str, tuple[str, RequirementRecord]]) -> list[dict[str, Any]]:
    """Missions whose newest run handed them over to a human (blocked), with their rounds."""
    out = []
    for mission_id, (run_id, record) in sorted(latest.items()):
        if record.handover is None:
            continue
        out.append(
            {
                "mission_id": mission_id,
                "run_id": run_id,
                "code": record.handover.code,
                "reason": record.handover.reason,
                "failing_stage": record.failing_stage,
                "rounds": [r.model_dump(mode="json") for r in record.handover.rounds],
                "lines": handover_lines(record.handover),
            }
        )
    return out


def _human(latest: dict[str, tuple[str, RequirementRecord]]) -> dict[str, Any]:
    """Where a human took part in a mission's newest run: messages steered to its agents,
    answers to its hand-over, lines changed by hand in its sandbox."""
    found: dict[str, Any] = {}
    for mission_id, (run_id, record) in sorted(latest.items()):
        steered = record.steered
        if steered or record.answers or record.human_lines:
            found[mission_id] = {
                "run_id": run_id,
                "steered": steered,
                "answers": len(record.answers),
                "human_lines": record.human_lines,
            }
    return found


def _bar(rate: float | None) -> str:
    if rate is None:
        return "·" * BAR_WIDTH
    filled = round(rate * BAR_WIDTH)
    return "█" * filled + "░" * (BAR_WIDTH - filled)


def render_report(data: dict[str, Any]) -> str:
    lines = [f"harness report: {data['runs']} run(s), {data['attempts']} attempt(s)"]
    for problem in data["unreadable_ledgers"]:
        lines.append(f"  unreadable ledger skipped: {problem}")
    lines.append("")
    lines.append("Where attempts end (per attempt):")
    for end, count in data["attempt_ends"].items():
        lines.append(f"  {end:<14} {count}")
    if not data["attempt_ends"]:
        lines.append("  no attempt yet")
    lines.append("")
    lines.append("Missions that spent every attempt and delivered nothing:")
    for item in data["exhausted"]:
        mark = "  [marked false failure]" if item["marked_false"] else ""
        lines.append(
            f"  {item['mission_id']}  {item['attempts']}/{item['max_attempts']} attempts, "
            f"last red at {item['failing_stage'] or '?'}  ({item['run_id']}){mark}"
        )
    if not data["exhausted"]:
        lines.append("  none")
    lines.append("")
    if data.get("human"):
        lines.append("A human took part (the newest run of each mission):")
        for mission_id, took in data["human"].items():
            lines.append(
                f"  {mission_id}: {took['steered']} steered, {took['answers']} answer(s), "
                f"{took['human_lines']} line(s) by hand ({took['run_id']})"
            )
        lines.append("")
    lines.append("Handed over to a human (blocked; the newest run of each mission):")
    for item in data["handed_over"]:
        lines.append(
            f"  {item['mission_id']}  {item['code']}: {item['reason']}  ({item['run_id']})"
        )
        lines += item["lines"]
    if not data["handed_over"]:
        lines.append("  none")
    lines.append("")
    lines.append(
        "Same cause (red to green; missions still red the same way, for a human to look at):"
    )
    for item in data["same_cause"]:
        cause = item["cause"]
        shown = f"at {cause['stage']}" + (
            f" [{', '.join(cause['codes'])}]" if cause["codes"] else ""
        )
        shown += f" in {', '.join(cause['modules'])}" if cause["modules"] else ""
        lines.append(
            f"  {item['mission_id']} green in {item['run_id']} (was red {shown}): "
            + (", ".join(item["candidates"]) or "no other mission")
        )
    if not data["same_cause"]:
        lines.append("  none")
    lines.append("")
    lines.append(
        "Needs review (green, but with lines that could tamper with the judge; the newest run):"
    )
    for mission_id, item in data["needs_review"].items():
        lines.append(f"  {mission_id}: {headline(item['review'], 0)}  ({item['run_id']})")
        lines += [f"    {line}" for line in item["review"]]
    if not data["needs_review"]:
        lines.append("  none")
    lines.append("")
    lines.append(
        "Fail-to-pass (do the tests test the change? the tests over the base's source; "
        "the newest run):"
    )
    for mission_id, item in data["fail_to_pass"].items():
        lines.append(f"  {mission_id}: {item['line']}  ({item['run_id']})")
        lines += [f"    vacuous: {name}" for name in item["vacuous"][:10]]
    if not data["fail_to_pass"]:
        lines.append("  none")
    lines.append("")
    lines.append("Unverified promises (blocked: nothing checks them):")
    for mission_id, promises in data["unverified_promises"].items():
        lines += [f"  {mission_id}: {promise}" for promise in promises]
    if not data["unverified_promises"]:
        lines.append("  none")
    lines.append("")
    lines.append("Residual gaps (degraded evidence: what the substitute does not cover):")
    for mission_id, residuals in data["residual_gaps"].items():
        lines += [f"  {mission_id}: {residual}" for residual in residuals]
    if not data["residual_gaps"]:
        lines.append("  none")
    lines.append("")
    lines.append(
        "Pass rate per run (oldest first; passed / judged, judged = passed + failed + blocked;"
        " - when nothing was judged):"
    )
    for run in data["pass_rate"]:
        rate = run["pass_rate"]
        shown = f"{percent(rate):>4} {run['passed']}/{run['judged']}" if rate is not None else "-"
        lines.append(
            f"  {run['started_at'][:16]}  {_bar(rate)} {shown:<9}  {run['run_id']}"
            + (f"  ({run['blocked']} blocked)" if run["blocked"] else "")
        )
    if not data["pass_rate"]:
        lines.append("  no run yet")
    declared = data["cost"]["declared"]
    lines.append("")
    lines.append(f"Cost, {declared['label']}:")
    total = f"{declared['total']:g}"
    if declared["complete"]:
        lines.append(f"  total {total} over {declared['attempts_with_hint']} attempt(s)")
    else:
        lines.append(
            f"  at least {total} over {declared['attempts_with_hint']} attempt(s); "
            f"{declared['attempts_without_hint']} attempt(s) of profiles without a hint "
            "are not in it: the total is incomplete"
        )
    for name, entry in declared["by_profile"].items():
        hint = entry["cost_per_run_hint"]
        if hint is None:
            lines.append(f"  {name}: {entry['attempts']} attempt(s), no cost_per_run_hint")
        else:
            lines.append(
                f"  {name}: {entry['attempts']} attempt(s) × {hint:g} = {entry['declared']:g}"
            )
    measured = data["cost"]["measured"]
    lines.append(f"Cost, {measured['label']}:")
    if not measured["reports"]:
        lines.append("  no agent reported token usage")
    for name, entry in measured["by_runtime"].items():
        cost = (
            f"${entry['cost_usd']:.4f}"
            if entry["cost_usd"] is not None
            else "cost unknown: " + "; ".join(entry["cost_unknown"])
        )
        line = (
            f"  {name}: {entry['attempts']} attempt(s), {entry['input_tokens']} input "
            f"({entry['cache_read_tokens']} cache read) + {entry['output_tokens']} output "
            f"tokens, {cost}"
        )
        if entry["cost_per_passed_mission"] is not None:
            line += (
                f"; ${entry['cost_per_passed_mission']:.4f} and "
                f"{entry['tokens_per_passed_mission']} tokens per passed mission "
                f"({entry['passed_missions']})"
            )
        lines.append(line)
    if measured["cheapest"] is not None:
        lines.append(f"  cheapest per passed mission: {measured['cheapest']}")
    marks = data["false_failures"]
    lines.append("")
    lines.append(
        f"False failures: {marks['failures_marked_false']} of {marks['failures']} failure(s) "
        f"are of missions marked false ({marks['marks']} mark(s): "
        f"{', '.join(marks['missions']) or 'none'})"
    )
    return "\n".join(lines)
