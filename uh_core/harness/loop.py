"""``harness run``: every selected mission through the loop, one after another — or up to
``jobs`` at once (``uh_core.harness.schedule``).

``prepare`` (``uh_core.harness.prepare``) does every check that can refuse the run (config,
agent, git, clean tree, missions, runtime) before anything is written. ``HarnessRun``
then writes ``harness.run.started``/``finished`` to the audit log, the ledger after every
mission and at the end whatever happens, and checks between missions whether it was asked
to stop (a signal, ``should_stop``, or the budget).

Before each mission: its plan blockers (``nothing_can_fail`` always skips it; the others
skip it under ``--skip-not-ready`` and are otherwise warnings), then the budget
(``budget_seconds``, ``max_requirements``) — never during an attempt. A mission the budget
does not reach is ``skipped`` with code ``budget``; running out is not an error.

Every mission runs through ``run_mission(deps, mission)`` (default ``run_requirement``) with
a copy of the run's ``Deps`` of its own: the seam a distributed executor plugs into.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from uh_core.clock import new_run_id, timestamp
from uh_core.errors import Interrupted
from uh_core.events.writer import EventLog
from uh_core.harness.config import Flags
from uh_core.harness.deps import Deps, Progress
from uh_core.harness.ledger import write_ledger
from uh_core.harness.plan import ALWAYS_SKIPPED
from uh_core.harness.prepare import Prepared, prepare
from uh_core.harness.prompt import branch_name
from uh_core.harness.requirement import run_requirement
from uh_core.harness.schedule import run_side_by_side
from uh_core.layout import Layout
from uh_core.models.events import (
    HarnessBudgetChecked,
    HarnessRequirementFinished,
    HarnessRequirementSkipped,
    HarnessRunFinished,
    HarnessRunStarted,
    Owner,
)
from uh_core.models.ledger import AttemptRecord, HarnessLedger, RequirementRecord
from uh_core.models.mission import Mission
from uh_core.runtime.run import CancelToken
from uh_core.security import guard
from uh_core.security.guard import EngineWrites

if TYPE_CHECKING:
    from uh_core.distributed.harness import RayMissions

StopCheck = Callable[[HarnessLedger], str | None]
RunMission = Callable[[Deps, Mission], RequirementRecord]


def _quiet(_: str) -> None:
    return None


class HarnessRun:
    def __init__(
        self,
        prepared: Prepared,
        token: CancelToken | None = None,
        should_stop: StopCheck | None = None,
        progress: Progress | None = None,
        run_mission: RunMission | None = None,
    ) -> None:
        self.prepared = prepared
        self.run_mission: RunMission = run_mission or run_requirement
        # told of each mission once its record is in the ledger; True: it changed the record
        self.after_record: Callable[[RequirementRecord], bool] | None = None
        self.lock = threading.RLock()  # the ledger and the counters: missions end side by side
        self.layout = prepared.layout
        self.token = token or CancelToken()
        self.should_stop = should_stop
        self.run_id = new_run_id("harness")
        self.deps = Deps(
            self.layout, prepared.settings, prepared.spec, prepared.base_commit,
            self.run_id, self.token, progress or _quiet,
            profiles=prepared.profiles, specs=prepared.specs,
            isolation=prepared.isolation or guard.resolve(prepared.settings.isolation),
            engine=EngineWrites(), side_by_side=prepared.settings.jobs > 1,
        )  # fmt: skip
        self.ledger = HarnessLedger(
            run_id=self.run_id,
            started_at=timestamp(),
            root=str(self.layout.root),
            base_commit=prepared.base_commit,
            settings=prepared.settings.record(),
        )
        self.audit = EventLog(self.layout.audit_log, run_id=self.run_id)
        self.ledger_file: Path | None = None
        self._started = time.monotonic()
        self._started_missions = 0
        self._budget_stop: str | None = None
        self._stop: str | None = None
        self.deps.run_attempts = self._run_attempts
        budget = prepared.settings.budget_seconds
        self.deps.deadline = self._started + budget if budget is not None else None
        order = [m.mission for m, _ in prepared.selection.skipped]
        order += [m.mission for m in prepared.selection.missions]
        self._rank = {mission.id: n for n, mission in enumerate(order)}

    def _run_attempts(self) -> list[AttemptRecord]:
        """Every attempt so far: the missions ended and those in progress (the run's spend)."""
        ended, running = list(self.ledger.requirements), list(self.deps.current.values())
        records = {id(r): r for r in [*ended, *running]}  # one that just ended is in both
        return [a for record in records.values() for a in list(record.attempts)]

    def mission_deps(self, mission: Mission) -> Deps:
        """This mission's own copy of the run's deps (``current``, ``engine``, the token
        and ``where`` stay shared: they are the run's)."""
        return replace(self.deps)

    def _stop_reason(self) -> str | None:
        if self.token.reason is not None:
            return self.token.reason
        return self.should_stop(self.ledger) if self.should_stop is not None else None

    def _skipped(self, mission: Mission, reason: str, code: str | None) -> RequirementRecord:
        record = RequirementRecord(
            mission_id=mission.id,
            title=mission.display_title,
            branch=branch_name(mission.id),
            outcome="skipped",
            reason=reason,
            skip_code=code,
        )
        EventLog(
            self.layout.mission_events(mission.id), mission_id=mission.id, run_id=self.run_id
        ).emit(
            HarnessRequirementFinished(
                branch=record.branch, outcome="skipped", reason=reason, code=code
            )
        )
        self.audit.emit(HarnessRequirementSkipped(mission_id=mission.id, code=code, reason=reason))
        self.deps.progress(f"{mission.id}: skipped: {reason}")
        return record

    def _budget(self) -> dict[str, float | int | None]:
        settings = self.prepared.settings
        return {
            "budget_seconds": settings.budget_seconds,
            "max_requirements": settings.max_requirements,
            "elapsed_s": round(time.monotonic() - self._started, 3),
            "started": self._started_missions,
        }

    def _budget_reason(self, mission: Mission) -> str | None:
        """Checked before a mission starts: the reason it may not, or None."""
        settings = self.prepared.settings
        elapsed = time.monotonic() - self._started
        reason = None
        if (
            settings.max_requirements is not None
            and self._started_missions >= settings.max_requirements
        ):
            reason = (
                f"budget: max_requirements {settings.max_requirements} reached "
                f"({self._started_missions} started)"
            )
        elif settings.budget_seconds is not None and elapsed >= settings.budget_seconds:
            reason = f"budget: {elapsed:.1f} s used of budget_seconds {settings.budget_seconds:g}"
        self.audit.emit(
            HarnessBudgetChecked(
                next_mission=mission.id,
                elapsed_s=round(elapsed, 3),
                budget_seconds=settings.budget_seconds,
                started=self._started_missions,
                max_requirements=settings.max_requirements,
                exhausted=reason,
            )
        )
        return reason

    def _next(self, mission: Mission) -> RequirementRecord:
        """One mission: skipped (stop, readiness, budget) or run."""
        admitted = self.admit(mission)
        if isinstance(admitted, RequirementRecord):
            return admitted
        return self.ran(self.run_mission(self.mission_deps(mission), mission), admitted)

    def ran(self, record: RequirementRecord, warnings: list[str]) -> RequirementRecord:
        """A mission ``admit`` started has ended: one that got no worktree is not counted."""
        record.warnings = warnings
        if record.sandbox_id is None:
            with self.lock:
                self._started_missions -= 1
        return record

    def admit(self, mission: Mission) -> RequirementRecord | list[str]:
        """Before a mission starts: its skip record (stop, readiness, budget), or the
        warnings it starts with — counted as started from here (``max_requirements``)."""
        stop = self._stop or self._stop_reason()
        if stop is not None:
            self._stop = stop
            self.ledger.stopped = self.ledger.stopped or stop
            return self._skipped(mission, f"the run stopped: {stop}", "stopped")
        if self._budget_stop is not None:
            return self._skipped(mission, self._budget_stop, "budget")
        blockers = self.prepared.blockers.get(mission.id, [])
        always = [b for b in blockers if b.code in ALWAYS_SKIPPED]
        if always:
            return self._skipped(mission, always[0].message, always[0].code)
        if blockers and self.prepared.settings.skip_not_ready:
            reason = "not ready: " + "; ".join(b.message for b in blockers)
            return self._skipped(mission, reason, blockers[0].code)
        budget = self._budget_reason(mission)
        if budget is not None:
            self._budget_stop = self.ledger.stopped = budget
            return self._skipped(mission, budget, "budget")
        # branch_exists is decided by run_requirement (skipped unless --force).
        warnings = [f"{b.code}: {b.message}" for b in blockers if b.code != "branch_exists"]
        for warning in warnings:
            self.deps.progress(f"{mission.id}: warning: not ready: {warning}")
        with self.lock:
            self._started_missions += 1
        return warnings

    def record(self, record: RequirementRecord) -> None:
        """A mission ended: into the ledger, in selection order whatever the finishing
        order, and the ledger rewritten (engine-noted: other missions' guards see the
        engine's write, not tampering); then ``after_record`` (``--promote-green``), whose
        change to the record is written too."""
        with self.lock:
            self.ledger.requirements.append(record)
            self._order()
            self._security(record)
            self.ledger.budget = self._budget()
            self._write()
            if self.after_record is not None and self.after_record(record):
                self._write()

    def _order(self) -> None:
        last = len(self._rank)
        self.ledger.requirements.sort(key=lambda r: self._rank.get(r.mission_id, last))

    def _write(self) -> Path:
        engine = self.deps.engine or EngineWrites()
        with engine.writing():
            self.ledger_file = write_ledger(self.layout, self.ledger)
            engine.file(self.layout.root, self.ledger_file)
        return self.ledger_file

    def _keep_current(self, reason: str) -> None:
        """Every mission in progress when an exception ended the run goes into the ledger."""
        with self.lock:
            kept = {id(r) for r in self.ledger.requirements}
            for current in list(self.deps.current.values()):
                if id(current) in kept:
                    continue
                if current.finished_at is None:  # stopped by the operator: not judged
                    current.outcome = "interrupted" if reason == "interrupted" else "fail"
                    current.reason = current.reason or reason
                    current.finished_at = timestamp()
                self.ledger.requirements.append(current)
            self._order()

    def _security(self, record: RequirementRecord) -> None:
        """Carry each attempt's isolation and tampering up to the run."""
        for attempt in record.attempts:
            how = attempt.isolation or "none"
            if attempt.isolation_note and how == "none":
                how = f"none: {attempt.isolation_note}"
            if attempt.isolation is not None and how not in self.ledger.isolation:
                self.ledger.isolation.append(how)
            self.ledger.tampered += [
                f"{record.mission_id} attempt {attempt.attempt}: {change}"
                for change in attempt.tampered
            ]

    def run(self) -> HarnessLedger:
        selection = self.prepared.selection
        for line in self.prepared.stopped:
            self.deps.progress(f"stopped what an earlier run left: {line}")
        self._started = time.monotonic()
        self.ledger.budget = self._budget()
        self.audit.emit(
            HarnessRunStarted(
                missions=[m.mission.id for m in selection.missions],
                budget=self.ledger.budget,
                owner=Owner.here(),  # a reader sees a killed run as interrupted
            )
        )
        try:
            for loaded, reason in selection.skipped:
                self.ledger.requirements.append(self._skipped(loaded.mission, reason, "status"))
            if self.prepared.settings.jobs > 1:
                run_side_by_side(self, [loaded.mission for loaded in selection.missions])
            else:
                for loaded in selection.missions:
                    self.record(self._next(loaded.mission))
            interrupted = self.token.reason is not None
            self.ledger.status = "interrupted" if interrupted else "completed"
            if interrupted:  # said in the summary: why it stopped (a signal, tampering)
                self.ledger.stopped = self.ledger.stopped or self.token.reason
            if self.ledger.tampered:
                self.ledger.status = "tampered"
        except (KeyboardInterrupt, Interrupted):
            self.ledger.status, self.ledger.error = "interrupted", "interrupted"
            self._keep_current("interrupted")
            raise
        except BaseException as exc:
            self.ledger.status, self.ledger.error = "error", str(exc) or type(exc).__name__
            self._keep_current(f"the run failed: {self.ledger.error}")
            raise
        finally:
            with self.lock:
                self.ledger.finished_at = timestamp()
                self.ledger.budget = self._budget()
                written = self._write()
            totals = self.ledger.totals
            self.audit.emit(
                HarnessRunFinished(
                    passed=totals.passed,
                    failed=totals.failed,
                    skipped=totals.skipped,
                    blocked=totals.blocked,
                    errors=totals.errors,
                    interrupted=totals.interrupted,
                    status=self.ledger.status,
                    ledger=self.layout.rel(written),
                    stopped=self.ledger.stopped,
                    budget=self.ledger.budget,
                )
            )
        return self.ledger


def run_harness(
    layout: Layout,
    flags: Flags,
    token: CancelToken | None = None,
    should_stop: StopCheck | None = None,
    progress: Progress | None = None,
) -> tuple[HarnessLedger, Path]:
    prepared = prepare(layout, flags)
    remote = mission_runner(prepared)
    runner = HarnessRun(prepared, token, should_stop, progress, run_mission=remote)
    try:
        ledger = runner.run()
    finally:
        if remote is not None:
            remote.close()
    assert runner.ledger_file is not None
    return ledger, runner.ledger_file


def mission_runner(prepared: Prepared, trust_workers: bool = False) -> RayMissions | None:
    """``--executor ray``: the missions' ``run_mission`` on the cluster (connected now, before
    the run writes anything: an unreachable cluster refuses the run). None: run here.
    ``trust_workers``: a worker's green stands without the head's re-judge."""
    if prepared.settings.executor != "ray":
        return None
    from uh_core.distributed.harness import RayMissions

    settings = prepared.settings
    return RayMissions(prepared.layout, prepared.base_commit, settings.ray_address, trust_workers)
