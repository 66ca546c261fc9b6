"""``harness run --executor ray``: each mission a job on the cluster, through the loop's
``run_mission`` seam — scheduling, dependencies, budgets, the ledger and the summary are
the local run's own (``--jobs N`` missions at once).

For each mission the head does what must happen in the operator's repository: the checks
that can skip it (``branch_exists`` unless ``--force``), claiming ``harness/<id>`` at the
base commit, and placement (a mission whose runtime no node advertises is ``blocked``,
never queued forever). The worker runs ``run_requirement`` in its own workspace; the head
lands the result (``land_requirement``). A job that ends without a result (its worker or
node died, or it would not stop after a cancel) is ``error`` naming the node; its claimed
branch is removed again (nothing of it reached the head), so the next run starts clean.
``--resume`` is not offered on Ray: a worker's sandbox does not outlive its job.

A worker's green is a claim. Its objects are checked before they land
(``uh_core.jobs.objects``), and unless the run trusts its workers (``--trust-workers``,
recorded in the ledger's settings) the head judges the landed commit again itself
(``_head_rejudge``: ``uh_core.judge.rejudge``) before the branch moves. A disagreement, or
an object that is not what its id says, is ``tampered``: nothing lands and the run stops,
as a local run stops when an agent reached the operator's repository.
"""

from __future__ import annotations

import time

from uh_core.clock import timestamp
from uh_core.distributed.runner import RayExecutor
from uh_core.errors import UhError, UsageError
from uh_core.events.answers import is_answer_line
from uh_core.events.writer import EventLog
from uh_core.git import git, run_git
from uh_core.harness.agent import AGENT_ID
from uh_core.harness.config import Settings
from uh_core.harness.deps import Deps
from uh_core.harness.requirement import begin, finish
from uh_core.jobs.harness_job import Rejudge, harness_job, is_tampered, land_requirement
from uh_core.jobs.model import NodeInfo
from uh_core.jobs.source import make_source
from uh_core.judge.rejudge import rejudge
from uh_core.layout import Layout
from uh_core.models.events import SecurityTampered
from uh_core.models.ledger import RequirementRecord
from uh_core.models.mission import Mission
from uh_core.security import guard


def refuse_on_ray(settings: Settings) -> None:
    if settings.resume:
        raise UsageError(
            "--resume with --executor ray: a worker's sandbox ends with its job",
            fix="resume with --executor local, or rerun the missions with --force",
        )


class RayMissions:
    """The ``run_mission`` of a harness run on Ray (one per run; ``close`` at the end)."""

    def __init__(
        self, layout: Layout, base_commit: str, ray_address: str | None,
        trust_workers: bool = False,
    ) -> None:  # fmt: skip
        self.trust_workers = trust_workers
        self.executor = RayExecutor(ray_address)
        self.executor.share(make_source(layout, base_commit))

    def close(self) -> None:
        self.executor.close()

    def __call__(self, deps: Deps, mission: Mission) -> RequirementRecord:
        opening = begin(deps, mission)  # as a local run begins: record, profile, skip checks
        deps, record, log, started = opening.deps, opening.record, opening.log, opening.started
        branch = record.branch
        if opening.skip is not None:  # begin said it
            return _ended(deps, log, record, started, "skipped", opening.skip)
        runtime = None if deps.spec.name == AGENT_ID else deps.spec.name
        resources, why = self.executor.placement(runtime)
        if why is not None:  # _ended says it
            return _ended(deps, log, record, started, "blocked", why)
        git(deps.layout.root, "update-ref", f"refs/heads/{branch}", deps.base_commit, "0" * 40)
        job = harness_job(f"{deps.run_id}-{mission.id}", deps, mission.id)
        stream = self.executor.submit(job, resources)
        deps.progress(f"{mission.id}: sent to the Ray cluster")

        def sink(lines: list[bytes], _node: NodeInfo) -> None:
            for line in lines:
                if not is_answer_line(line):  # an answer is the operator's, never relayed
                    log.append_line(line)

        seen = self.executor.follow(stream, job.job_id, deps.token, sink, deps.progress)
        node = seen.node or NodeInfo(node_id="?")
        failure = seen.failure
        if seen.result is not None and seen.result.error is not None:
            failure = f"on {node.label()}: {seen.result.error}"
        if seen.result is not None and failure is None:
            arrived = time.monotonic()
            judge = None if self.trust_workers else _head_rejudge(deps, mission)
            try:
                landed = land_requirement(
                    deps.layout, job, seen.result, node, deps.spec.name, judge
                )
            except UhError as exc:
                failure = f"the result from {node.label()} did not land: {exc.one_line()}"
            else:
                if is_tampered(landed):  # refused on the worker or here: nothing landed
                    return _tampered(deps, log, landed, record, started)
                # The operator's clock: from dispatch to landed (the worker's is in timings).
                landed.started_at, landed.finished_at = record.started_at, timestamp()
                landed.duration_ms = int((time.monotonic() - started) * 1000)
                landed.job_timings = {
                    **seen.result.timings, "land_s": round(time.monotonic() - arrived, 3),
                    "total_s": round(time.monotonic() - started, 3),
                }  # fmt: skip
                deps.current[mission.id] = landed
                return landed
        _release(deps.layout, branch, deps.base_commit)
        if seen.unstarted:  # the run stopped before a node took it: as a mission not started
            record.skip_code = "stopped"
            return _ended(deps, log, record, started, "skipped", failure or "stopped")
        record.node = node.label() if seen.node is not None else None
        return _ended(deps, log, record, started, "error", failure or "no result")


def _head_rejudge(deps: Deps, mission: Mission) -> Rejudge:
    """The head's own verdict on a worker's commit (its objects checked, no ref yet):
    ``uh_core.judge.rejudge`` — the mission's checks and the tests stage in a pristine
    checkout of the commit, confined as the run's isolation allows. None: green, and on
    the tree the worker's gate judged; else what the head found."""

    def judge(commit: str) -> str | None:
        isolation = deps.isolation or guard.resolve(deps.settings.isolation)
        found = rejudge(deps.layout, mission, commit, deps.base_commit, deps.settings, isolation)
        if not found.passed:  # its detail names each failed stage ("verify: failed: …")
            return found.detail or "red"
        tree = git(deps.layout.root, "rev-parse", f"{commit}^{{tree}}").strip()
        if found.tree != tree:
            return f"it judged tree {found.tree[:12]}, the commit holds {tree[:12]}"
        deps.progress(f"{mission.id}: re-judged on the head: green"
                      + ("" if found.confined else " (unconfined)"))  # fmt: skip
        return None

    return judge


def _tampered(
    deps: Deps, log: EventLog, landed: RequirementRecord, record: RequirementRecord,
    started: float,
) -> RequirementRecord:  # fmt: skip
    """A worker's result refused: the branch released, the run stopped, as a local run
    stops on tampering."""
    _release(deps.layout, record.branch, deps.base_commit)
    last = landed.attempts[-1]
    log.emit(SecurityTampered(attempt=last.attempt, changes=last.tampered[-1:]))
    landed.started_at = record.started_at
    deps.current[landed.mission_id] = landed
    deps.token.cancel(f"tampered: {landed.mission_id}: {last.tampered[-1]}")
    deps.progress(f"{landed.mission_id}: {landed.reason}")
    return finish(deps, log, landed, started)


def _release(layout: Layout, branch: str, base: str) -> None:
    """The claimed branch, removed while it still points at the base (nothing landed)."""
    run_git(["update-ref", "-d", f"refs/heads/{branch}", base], cwd=layout.root, timeout=30)


def _ended(
    deps: Deps, log: EventLog, record: RequirementRecord, started: float, outcome: str,
    reason: str,
) -> RequirementRecord:  # fmt: skip
    record.outcome, record.reason = outcome, reason  # type: ignore[assignment]
    if outcome != "skipped":
        deps.progress(f"{record.mission_id}: {outcome}: {reason}")
    return finish(deps, log, record, started)
