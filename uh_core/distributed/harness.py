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
"""

from __future__ import annotations

import time

from uh_core.clock import timestamp
from uh_core.distributed.runner import RayExecutor
from uh_core.errors import UhError, UsageError
from uh_core.events.writer import EventLog
from uh_core.git import git, run_git
from uh_core.harness.agent import AGENT_ID
from uh_core.harness.config import Settings
from uh_core.harness.deps import Deps
from uh_core.harness.requirement import begin, finish
from uh_core.jobs.harness_job import harness_job, land_requirement
from uh_core.jobs.model import NodeInfo
from uh_core.jobs.source import make_source
from uh_core.layout import Layout
from uh_core.models.ledger import RequirementRecord
from uh_core.models.mission import Mission


def refuse_on_ray(settings: Settings) -> None:
    if settings.resume:
        raise UsageError(
            "--resume with --executor ray: a worker's sandbox ends with its job",
            fix="resume with --executor local, or rerun the missions with --force",
        )


class RayMissions:
    """The ``run_mission`` of a harness run on Ray (one per run; ``close`` at the end)."""

    def __init__(self, layout: Layout, base_commit: str, ray_address: str | None) -> None:
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
                log.append_line(line)

        seen = self.executor.follow(stream, job.job_id, deps.token, sink, deps.progress)
        node = seen.node or NodeInfo(node_id="?")
        failure = seen.failure
        if seen.result is not None and seen.result.error is not None:
            failure = f"on {node.label()}: {seen.result.error}"
        if seen.result is not None and failure is None:
            arrived = time.monotonic()
            try:
                landed = land_requirement(deps.layout, job, seen.result, node, deps.spec.name)
            except UhError as exc:
                failure = f"the result from {node.label()} did not land: {exc.one_line()}"
            else:
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
