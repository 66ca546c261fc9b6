"""``harness report``: what the loop has cost and where it fails, over every ledger.

Read from ``.harness/runs/*.json`` (and, for measured token usage, the ``runtime.usage``
events of those runs in the missions' logs); nothing here changes a file except a
false-failure mark, one JSON object appended to ``.harness/false-failures.jsonl``.

- **Where attempts end**: per attempt, the stage that turned it red (``pass`` when green,
  ``interrupted``/``error`` when no verdict was reached).
- **Missions that spent every attempt and delivered nothing**: failed records with as many
  attempts as the run allowed and no commit.
- **Pass rate per run**, oldest first, as a small text chart.
- **Cost**: *declared* = attempts × the profile's ``cost_per_run_hint``; attempts of
  profiles without a hint (and of the run's default agent) are counted apart, so a total is
  never shown as complete when it is not. *Measured*: ``runtime.usage`` tokens, summed.
- **False failures**: marks apply to the mission (every run), with a reason.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from uh_core.clock import timestamp
from uh_core.errors import NotFoundError, UhError, UsageError, ValidationError
from uh_core.events.reader import read_events
from uh_core.events.writer import append_line
from uh_core.git import is_repository
from uh_core.harness.ledger import list_ledgers, read_ledger
from uh_core.harness.summary import handover_lines
from uh_core.harness.workspace import require_ignored
from uh_core.ids import check_id
from uh_core.layout import Layout
from uh_core.models.events import RuntimeUsage
from uh_core.models.ledger import HarnessLedger, RequirementRecord
from uh_core.yamllimits import YamlLimitError, read_json_lines

MARKS_FILE = "false-failures.jsonl"
BAR_WIDTH = 20


def marks_path(layout: Layout) -> Path:
    return layout.harness / MARKS_FILE


def read_marks(layout: Layout) -> list[dict[str, Any]]:
    path = marks_path(layout)
    if not path.is_file():
        return []
    marks = []
    try:  # bounded (uh_core.yamllimits): a line over the caps refuses the file, in one line
        for _number, data in read_json_lines(path):
            if isinstance(data, dict) and isinstance(data.get("mission_id"), str):
                marks.append(data)  # anything else (a torn line, not JSON) is skipped
    except YamlLimitError as exc:
        raise ValidationError(
            [f"{layout.rel(path)}: refused: {exc} (fix: remove the line or raise the cap)"]
        ) from None
    return marks


def mark_false_failure(layout: Layout, mission_id: str, reason: str | None) -> dict[str, Any]:
    """Append one mark; a mark without a reason is refused (exit 2)."""
    if reason is None or not reason.strip():
        raise UsageError(
            "--mark-false-failure needs --reason TEXT",
            fix="say why the failure was not the agent's (a flaky test, a broken check, …)",
        )
    check_id(mission_id, "mission")
    if is_repository(layout.root):
        require_ignored(layout, (f".harness/{MARKS_FILE}",))
    ledgers = _ledgers(layout)[0]
    seen = {record.mission_id for ledger in ledgers for record in ledger.requirements}
    if mission_id not in seen and mission_id not in layout.mission_ids():
        raise NotFoundError(
            f"--mark-false-failure {mission_id}: no such mission in .harness/missions/ or in "
            "any ledger",
            fix="check the id (`uh-core harness report` lists the missions that failed)",
        )
    failed_in = [
        ledger.run_id
        for ledger in ledgers
        for record in ledger.requirements
        if record.mission_id == mission_id
        and (record.outcome == "fail" or record.handover is not None)
    ]
    mark = {
        "mission_id": mission_id,
        "reason": reason.strip(),
        "marked_at": timestamp(),
        "failed_runs": failed_in,
    }
    line = json.dumps(mark, ensure_ascii=False, separators=(",", ":")) + "\n"
    append_line(marks_path(layout), line.encode("utf-8"))
    return mark


def _ledgers(layout: Layout) -> tuple[list[HarnessLedger], list[str]]:
    ledgers, unreadable = [], []
    for path in list_ledgers(layout):
        try:
            ledgers.append(read_ledger(path))
        except UhError as exc:
            unreadable.append(exc.one_line())
    ledgers.sort(key=lambda ledger: ledger.started_at)
    return ledgers, unreadable


def _attempt_end(outcome: str, stage: str | None) -> str:
    if outcome == "pass":
        return "pass"
    if outcome == "fail":
        return stage or "unknown"
    return outcome  # interrupted, error: no verdict


def _measured(layout: Layout, run_ids: set[str], missions: set[str]) -> dict[str, Any]:
    total = {"input_tokens": 0, "output_tokens": 0, "reports": 0}
    by_source: Counter[str] = Counter()
    for mission_id in sorted(missions):
        try:
            path = layout.mission_events(mission_id)
        except UhError:
            continue
        if not path.is_file():
            continue
        events, _ = read_events(path)
        for event in events:
            if isinstance(event, RuntimeUsage) and event.run_id in run_ids:
                total["input_tokens"] += event.input_tokens
                total["output_tokens"] += event.output_tokens
                total["reports"] += 1
                by_source[event.source] += 1
    return {**total, "by_source": dict(by_source)}


def build_report(layout: Layout) -> dict[str, Any]:
    ledgers, unreadable = _ledgers(layout)
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
        passed = failed = 0
        for record in ledger.requirements:
            missions.add(record.mission_id)
            if record.outcome != "skipped":
                latest[record.mission_id] = (ledger.run_id, record)
            if record.outcome == "pass":
                passed += 1
            elif record.outcome == "fail" or record.handover is not None:  # red, handed over
                failed += 1
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
        judged = passed + failed
        runs.append(
            {
                "run_id": ledger.run_id,
                "started_at": ledger.started_at,
                "status": ledger.status,
                "passed": passed,
                "failed": failed,
                "skipped": sum(1 for r in ledger.requirements if r.outcome == "skipped"),
                "pass_rate": round(passed / judged, 4) if judged else None,
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
        "same_cause": _same_cause(ledgers),
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
                "label": "measured (runtime.usage events)",
                **_measured(layout, {ledger.run_id for ledger in ledgers}, missions),
            },
        },
        "false_failures": {
            "marks": len(marks),
            "missions": sorted(marked),
            "failures": failures,
            "failures_marked_false": failures_marked,
        },
    }


def _module(test: str) -> str:
    """A failing test's module: its dotted name without the test (and its class)."""
    parts = test.split("::")[0].removesuffix(".py").replace("/", ".").split(".")
    if "::" not in test:
        parts = parts[:-1]
        if parts and parts[-1][:1].isupper():
            parts = parts[:-1]
    return ".".join(parts)


def _cause(record: RequirementRecord) -> dict[str, Any] | None:
    """A red record's last failure: its stage, finding codes and, at tests, the modules of
    the failing tests. None when no round was judged red."""
    red = [a for a in record.attempts if a.outcome == "fail"]
    if not red or record.outcome == "pass":
        return None
    last = red[-1]
    failing = [s for s in last.stages if not s.passed]
    modules: set[str] = set()
    if last.stage == "tests":
        for stage in failing:
            modules.update(_module(t) for t in stage.evidence.get("failed_tests") or [])
    return {
        "stage": last.stage,
        "codes": sorted({f.code for s in failing for f in s.findings}),
        "modules": sorted(modules),
    }


def _same_cause(ledgers: list[HarnessLedger]) -> list[dict[str, Any]]:
    """Each mission that went from red to green, with the missions whose newest run is red
    for the same cause (stage, finding codes, failing tests' modules): candidates a human may
    look at. Nothing is changed."""
    cause: dict[str, dict[str, Any]] = {}  # mission → the cause of its newest red
    red_now: dict[str, bool] = {}
    fixed: list[dict[str, Any]] = []
    for ledger in ledgers:
        for record in ledger.requirements:
            mission_id = record.mission_id
            if record.outcome == "pass":
                if red_now.get(mission_id) and mission_id in cause:
                    fixed.append(
                        {"mission_id": mission_id, "run_id": ledger.run_id,
                         "cause": cause[mission_id]}
                    )  # fmt: skip
                red_now[mission_id] = False
                continue
            found = _cause(record)
            if found is not None:
                cause[mission_id], red_now[mission_id] = found, True
    for item in fixed:
        item["candidates"] = sorted(
            m
            for m, red in red_now.items()
            if red and m != item["mission_id"] and cause.get(m) == item["cause"]
        )
    return fixed


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
    lines.append("Pass rate per run (oldest first; passed / (passed + failed)):")
    for run in data["pass_rate"]:
        rate = run["pass_rate"]
        shown = f"{rate * 100:3.0f}%" if rate is not None else "  - "
        lines.append(
            f"  {run['started_at'][:16]}  {_bar(rate)} {shown}  "
            f"{run['passed']}/{run['passed'] + run['failed']}  {run['run_id']}"
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
    if measured["reports"]:
        lines.append(
            f"  {measured['input_tokens']} input + {measured['output_tokens']} output tokens "
            f"from {measured['reports']} report(s)"
        )
    else:
        lines.append("  no runtime reported token usage")
    marks = data["false_failures"]
    lines.append("")
    lines.append(
        f"False failures: {marks['failures_marked_false']} of {marks['failures']} failure(s) "
        f"are of missions marked false ({marks['marks']} mark(s): "
        f"{', '.join(marks['missions']) or 'none'})"
    )
    return "\n".join(lines)
