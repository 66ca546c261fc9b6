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
from dataclasses import replace

from uh_core.errors import UhError
from uh_core.events.fold import AuditFold, MissionFold
from uh_core.layout import Layout
from uh_core.models.events import Owner
from uh_core.procid import Probe
from uh_core.workspace.ledger_view import Ledgers, budget_text
from uh_core.workspace.liveness import elsewhere, lost
from uh_core.workspace.state import HarnessView, LedgerView, RequirementView


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
