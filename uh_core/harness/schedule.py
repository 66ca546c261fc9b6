"""Missions side by side: ``harness run --jobs N`` (docs/harness.md, "Missions in parallel").

The calling thread schedules; each mission runs in a worker thread through the run's
``run_mission`` seam with a ``Deps`` of its own. The rules:

- A mission starts only once every mission it ``depends_on`` within the run has ended —
  those before it in the run's order: a ``depends_on`` cycle keeps its order (the plan
  reports it, ``dependency_cycle``), so its later members gate nothing earlier and nothing
  can deadlock. When such a dependency did not pass (failed, skipped, error, tampered), the
  mission is ``skipped`` with code ``dependency_failed``, naming it.
- Before each start, in the run's order, the usual checks (``HarnessRun.admit``): a stop,
  readiness, then the budget. Starts count against ``max_requirements``; ``budget_seconds``
  is checked before each start. Once the budget is reached no mission starts; those running
  finish (they are not cancelled).
- A stop (Ctrl-C, SIGTERM, ``harness cancel``, tampering) cancels the shared token: every
  running agent is stopped, its attempt recorded ``interrupted``; missions not started are
  skipped. The ledger is rewritten after every mission ends, in the run's order.
- When every mission has ended, whatever their agents left that the per-mission stop did not
  find (``uh_core.harness.reap``) is stopped, as run-all does.
"""

from __future__ import annotations

import os
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING

from uh_core.isolation import children_of, reap_survivors
from uh_core.models.ledger import RequirementRecord
from uh_core.models.mission import Mission

if TYPE_CHECKING:
    from uh_core.harness.loop import HarnessRun

POLL_S = 0.2  # the scheduling thread wakes this often (signals are handled on it)
DEPENDENCY_FAILED = "dependency_failed"


def gates(missions: list[Mission]) -> dict[str, list[str]]:
    """Each mission's dependencies within the run that come before it in the run's order."""
    rank = {m.id: n for n, m in enumerate(missions)}
    return {
        m.id: [d for d in dict.fromkeys(m.depends_on) if d in rank and rank[d] < rank[m.id]]
        for m in missions
    }


class Scheduler:
    def __init__(self, run: HarnessRun, missions: list[Mission]) -> None:
        self.run = run
        self.jobs = run.prepared.settings.jobs
        self.waiting = list(missions)
        self.gates = gates(missions)
        self.ended: dict[str, str] = {}  # mission id → outcome
        self.running: dict[Future[RequirementRecord], tuple[Mission, list[str]]] = {}
        self.failure: BaseException | None = None

    def _end(self, mission: Mission, record: RequirementRecord) -> None:
        self.ended[mission.id] = record.outcome
        self.run.record(record)
        self.run.deps.current.pop(mission.id, None)

    def _startable(self, pool: ThreadPoolExecutor) -> None:
        """Start (or skip) every waiting mission whose dependencies have ended, in order,
        while there is a free slot; a stopped run skips every waiting one at once."""
        for mission in list(self.waiting):
            stopped = self.run.token.reason is not None or self.failure is not None
            gate = self.gates[mission.id]
            if not stopped and any(d not in self.ended for d in gate):
                continue
            failed = [d for d in gate if self.ended.get(d, "pass") != "pass"]
            if not stopped and failed:
                self.waiting.remove(mission)
                shown = ", ".join(f"{d} ({self.ended[d]})" for d in failed)
                reason = f"dependency did not pass: {shown}"
                self._end(mission, self.run._skipped(mission, reason, DEPENDENCY_FAILED))
                continue
            if not stopped and len(self.running) >= self.jobs:
                continue
            self.waiting.remove(mission)
            admitted = self.run.admit(mission)
            if isinstance(admitted, RequirementRecord):
                self._end(mission, admitted)
                continue
            future = pool.submit(self.run.run_mission, self.run.mission_deps(mission), mission)
            self.running[future] = (mission, admitted)

    def _collect(self, timeout: float) -> None:
        done, _ = wait(list(self.running), timeout=timeout, return_when=FIRST_COMPLETED)
        for future in done:
            mission, warnings = self.running.pop(future)
            try:
                record = future.result()
            except BaseException as exc:  # an engine failure: stop the others, raise after
                self.failure = self.failure or exc
                self.run.token.cancel(f"the run failed: {exc or type(exc).__name__}")
                self.ended[mission.id] = "fail"
                continue
            self._end(mission, self.run.ran(record, warnings))

    def drive(self) -> None:
        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="uh-mission")
        try:
            while self.waiting or self.running:
                self._startable(pool)
                if self.running:
                    self._collect(POLL_S)
        finally:  # a second Ctrl-C: the agents are already being stopped; do not wait
            pool.shutdown(wait=not self.running, cancel_futures=True)
        if self.failure is not None:
            raise self.failure


def run_side_by_side(run: HarnessRun, missions: list[Mission]) -> None:
    """Every mission of ``missions`` (in the run's order) through ``run``, up to
    ``settings.jobs`` at once. Raises what a mission's run raised, once the others ended."""
    children = set(children_of(os.getpid()))
    try:
        Scheduler(run, missions).drive()
    finally:
        left = reap_survivors(exclude=children)
        for survivor in left:
            run.deps.progress(f"stopped what an agent left: pid {survivor.pid}: {survivor.cmdline}")
        run.ledger.survivors += [f"pid {s.pid}: {s.cmdline}" for s in left]
