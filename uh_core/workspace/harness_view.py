"""The harness loop as values: every run's ledger, each mission's latest outcome and history.

Finished runs come from their ledgers (``.harness/runs/harness/*.json``, read by
``uh_core.harness.ledger.read_ledger``); a run in progress from the mission logs' folds
(``harness.requirement.*``) and the audit log's fold (the run and its budget so far).

A run whose runner is gone (``uh_core.workspace.liveness``) is ``interrupted``, never running
forever: its mission in progress, the audit's run, and a ledger it left saying ``running``
(written after each mission). A ledger's runner is named by the audit log's
``harness.run.started`` or by its registration (``uh_core.runtime.active``); a ``running``
ledger whose run has neither left no live process behind (a run registers before it writes
any ledger).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from uh_core.errors import UhError
from uh_core.events.fold import AuditFold, MissionFold
from uh_core.harness.rate import tally
from uh_core.layout import Layout
from uh_core.models.events import Owner
from uh_core.procid import Probe
from uh_core.workspace.files import Failed, FileCache
from uh_core.workspace.liveness import elsewhere, lost
from uh_core.workspace.state import HarnessView, LedgerView, RequirementView

if TYPE_CHECKING:  # the ledger models are imported with the first ledger (not before a
    # dashboard's first frame, in a project that has never run the harness)
    from uh_core.models.ledger import HarnessLedger, RequirementRecord


@dataclass(frozen=True)
class Ledgers:
    """What the ledgers on disk say: runs oldest first, outcomes per mission, the latest."""

    runs: tuple[LedgerView, ...] = ()
    history: dict[str, tuple[str, ...]] = field(default_factory=dict)
    latest: dict[str, RequirementView] = field(default_factory=dict)


def ledger_paths(layout: Layout) -> list[Path]:
    if not layout.ledgers_dir.is_dir():
        return []
    return sorted(layout.ledgers_dir.glob("*.json"))


def read_ledgers(layout: Layout, cache: FileCache) -> Ledgers:
    runs: list[LedgerView] = []
    history: dict[str, list[str]] = {}
    latest: dict[str, RequirementView] = {}
    paths = ledger_paths(layout)
    if paths:
        from uh_core.harness.ledger import read_ledger
    for path in paths:
        ledger = cache.load(path, read_ledger, layout.rel(path))
        if ledger is None:
            continue
        if isinstance(ledger, Failed):
            runs.append(LedgerView(path.stem, status="unreadable", problem=ledger.message))
            continue
        totals = ledger.totals
        counts = tally(r.outcome for r in ledger.requirements)  # the one rule's counts
        runs.append(
            LedgerView(
                ledger.run_id,
                status=ledger.status,
                started_at=ledger.started_at,
                passed=counts.passed,
                failed=counts.failed,
                skipped=counts.skipped,
                blocked=counts.blocked,
                errors=counts.errors,
                attempts=totals.attempts,
                duration_ms=totals.duration_ms,
                budget=budget_text(ledger.budget),
                last_seen=_progress_at(ledger) if ledger.status == "running" else None,
                tampered=tuple(ledger.tampered),
                unconfined=next(
                    (h.removeprefix("none: ") for h in ledger.isolation if h != "bwrap"), None
                ),
                budget_exhausted=counts.budget_exhausted,
                rate_limited=counts.rate_limited,
                **spend_values(ledger.usage.get("run") or {}),
            )
        )
        for record in ledger.requirements:
            history.setdefault(record.mission_id, []).append(_outcome(record))
            latest[record.mission_id] = _requirement(ledger, record)
    return Ledgers(tuple(runs), {k: tuple(v) for k, v in history.items()}, latest)


def cost_text(block: Mapping[str, Any]) -> str:
    """``$0.6300``, ``cost unknown: <why>``, or ``-`` when no agent reported usage."""
    if not block.get("models"):
        return "-"
    if block.get("cost_usd") is not None:
        return f"${block['cost_usd']:.4f}"
    return "cost unknown: " + "; ".join(block.get("cost_unknown") or [])


def spend_values(block: Mapping[str, Any]) -> dict[str, Any]:
    """A ledger's ``usage`` block as ``LedgerView`` fields."""
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    values: dict[str, Any] = {key: int(block.get(key) or 0) for key in keys}
    values["cost_usd"] = block.get("cost_usd") if block.get("models") else None
    values["cost"] = cost_text(block)
    return values


def registered_owners(layout: Layout) -> dict[str, Owner]:
    """Run id → the runner each ``harness run`` registered (``.harness/runs/active/``)."""
    from uh_core.runtime.active import harness_runs

    try:
        found = harness_runs(layout)
    except (OSError, UhError):
        return {}
    return {
        run.run_id: Owner(pid=run.pid, start_time=run.start_time, host=run.host)
        for _, run in found
        if isinstance(run.pid, int)
    }


def harness_view(
    ledgers: Ledgers,
    folds: Iterable[tuple[str, MissionFold]],
    audit: AuditFold | None,
    probe: Probe | None = None,
    registered: Mapping[str, Owner] | None = None,
) -> HarnessView:
    """Ledgers merged with what is running now (from the logs), each running state checked
    for a live runner through ``probe``; ``registered``: run id → the runner it registered."""
    probe = probe or Probe()
    latest = dict(ledgers.latest)
    seen: dict[str, str] = {}  # run id → its last event in any mission log
    for mission_id, fold in folds:
        progress = fold.harness
        if progress is None or not progress.running:
            continue
        if progress.run_id:
            seen[progress.run_id] = max(seen.get(progress.run_id, ""), progress.seen)
        gone = lost(probe, progress.owner, progress.seen)
        known = latest.get(mission_id)
        status = "running" if gone is None else "interrupted"
        reason = (
            f"attempt {progress.attempt or 1}: {progress.stage or 'agent'}"
            if gone is None
            else gone.why(f"attempt {progress.attempt or 1}")
        )
        if gone is None and progress.parked_until:
            status = "parked"
            reason = f"{progress.parked_runtime} rate limited: resumes at {progress.parked_until}"
        latest[mission_id] = RequirementView(
            mission_id,
            progress.run_id or "",
            status,
            attempts=progress.attempt,
            max_attempts=known.max_attempts if known else 0,
            failing_stage=progress.failing_stage,
            branch=progress.branch,
            reason=reason,
        )
    requirements = tuple(
        replace(view, history=ledgers.history.get(mission_id, ()))
        for mission_id, view in sorted(latest.items())
    )
    view = HarnessView(ledgers.runs, requirements)
    owners = dict(registered or {})
    if audit is not None and audit.run_id and audit.owner is not None:
        owners[audit.run_id] = audit.owner
    if audit is not None and audit.run_id and not audit.finished:
        owner = owners.get(audit.run_id)
        last = max(audit.seen, seen.get(audit.run_id, ""))
        gone = lost(probe, owner, last)
        if gone is None:
            view = replace(
                view,
                running=audit.run_id,
                running_budget=budget_text(audit.budget),
                running_host=elsewhere(probe, owner),
            )
        else:
            view = replace(view, interrupted=audit.run_id, interrupted_at=last or None)
    if audit is not None and audit.run_id:
        seen[audit.run_id] = max(seen.get(audit.run_id, ""), audit.seen)
    runs = tuple(_ledger_alive(probe, run, owners, seen) for run in ledgers.runs)
    return replace(view, ledgers=runs)


def _ledger_alive(
    probe: Probe, run: LedgerView, owners: Mapping[str, Owner], seen: Mapping[str, str]
) -> LedgerView:
    """A ledger saying ``running`` whose runner is gone (or unknown: never registered, so
    long gone) is ``interrupted``, last seen at its latest event or record."""
    if run.status != "running" or run.problem:
        return run
    owner = owners.get(run.run_id)
    if owner is not None and lost(probe, owner, "") is None:
        return run
    last = max(run.last_seen or "", seen.get(run.run_id, "")) or None
    return replace(run, status="interrupted", last_seen=last)


def _progress_at(ledger: HarnessLedger) -> str:
    """The latest time a ledger records: its start or a mission's end."""
    return max([ledger.started_at, *(r.finished_at or "" for r in ledger.requirements)])


def budget_text(budget: dict[str, Any]) -> str:
    """``12s of 600s · 2 of 3 missions`` from a harness budget (limits and use); the noun
    agrees with the limit (``0 of 1 mission``)."""
    parts = []
    seconds = budget.get("budget_seconds")
    if isinstance(seconds, int | float) and seconds:
        parts.append(f"{float(budget.get('elapsed_s') or 0):.0f}s of {seconds:g}s")
    limit = budget.get("max_requirements")
    if isinstance(limit, int) and limit:
        noun = "mission" if limit == 1 else "missions"
        parts.append(f"{budget.get('started') or 0} of {limit} {noun}")
    return " · ".join(parts) or "-"


def _budget(ledger: HarnessLedger, record: RequirementRecord) -> str:
    """What this mission used: its time, against the run's time budget when there was one."""
    used = f"{record.duration_ms / 1000:.0f}s"
    seconds = ledger.budget.get("budget_seconds")
    if isinstance(seconds, int | float) and seconds:
        return f"{used} of {seconds:g}s"
    return used if record.duration_ms else "-"


def _requirement(ledger: HarnessLedger, record: RequirementRecord) -> RequirementView:
    failing = record.failing_stage
    if (
        failing is None
        and record.outcome in ("fail", "blocked", "budget_exhausted")
        and record.attempts
    ):
        failing = record.attempts[-1].stage
    return RequirementView(
        record.mission_id,
        ledger.run_id,
        _outcome(record),
        attempts=len(record.attempts),
        max_attempts=ledger.settings.max_attempts,
        failing_stage=failing,
        branch=record.branch,
        duration_ms=record.duration_ms,
        budget=_budget(ledger, record),
        reason=_review(record) or record.reason,
        handover=_handover(record),
        notes=_notes(record),
        promote=_promote(record),
        fail_to_pass=_proof(record),
        **_spend(ledger, record),
    )


def _proof(record: RequirementRecord) -> str | None:
    from uh_core.models.ledger import fail_to_pass_of  # lazily, as the ledger models are

    proof = fail_to_pass_of(record.attempts[-1].stages) if record.attempts else None
    return proof.line() if proof is not None else None


def _spend(ledger: HarnessLedger, record: RequirementRecord) -> dict[str, Any]:
    block = (ledger.usage.get("missions") or {}).get(record.mission_id) or {}
    tokens = int(block.get("input_tokens") or 0) + int(block.get("output_tokens") or 0)
    return {"tokens": tokens, "cost": cost_text(block)}


def _outcome(record: RequirementRecord) -> str:
    """A green whose diff has lines with a shape of judge tampering reads ``needs review``."""
    return "needs review" if record.outcome == "pass" and record.review else record.outcome


def _review(record: RequirementRecord) -> str | None:
    if _outcome(record) != "needs review":
        return None
    from uh_core.judge.scan import headline

    return headline(record.review, 1)


def _handover(record: RequirementRecord) -> tuple[str, ...]:
    if not record.handover:
        return ()
    from uh_core.harness.summary import handover_lines

    return tuple(handover_lines(record.handover, ""))


def _notes(record: RequirementRecord) -> tuple[str, ...]:
    from uh_core.harness.summary import notes

    return tuple(notes(record))


def _promote(record: RequirementRecord) -> str | None:
    if record.outcome != "pass":
        return None
    from uh_core.harness.summary import promote_command

    return promote_command(record)
