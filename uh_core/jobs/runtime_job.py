"""One runtime of ``mission run-all`` as a job: run where a worker is, landed on the head.

The worker runs exactly what the local executor runs — ``MissionRun`` on a sandbox of the
base commit, guarded the same way — in its own workspace (``source.materialise``), then
returns the outcome, the diff and the sandbox's records. The head lands it in the sandbox
it made for that runtime (same id): the records under ``.harness/sandboxes/<id>/``, the
change applied to the sandbox's work tree, and the diff captured again there — the hash the
comparison shows is the head's own capture, checked against the worker's.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from uh_core.adapters.base import Adapter
from uh_core.errors import UhError
from uh_core.fileio import write_text_atomic
from uh_core.git import git_run
from uh_core.jobs import evidence
from uh_core.jobs.model import JobResult, NodeInfo, RuntimeJob
from uh_core.layout import Layout
from uh_core.missions import load_mission
from uh_core.models.adapter import AdapterManifest
from uh_core.models.sandbox import SandboxEntry
from uh_core.runtime.run import CancelToken, MissionRun, RunOptions, RunOutcome, diff_summary
from uh_core.sandbox.worktree import create_sandbox, entry_path, sandbox_records


def runtime_job(
    job_id: str, run: MissionRun, sandbox: SandboxEntry, mission_text: str
) -> RuntimeJob:
    """The job for ``run`` on the head's ``sandbox`` (made, empty, at the base commit)."""
    return RuntimeJob(
        job_id=job_id,
        mission_id=run.mission.id,
        mission_text=mission_text,
        manifest=run.manifest.model_dump(mode="json", by_alias=True, exclude_none=True),
        sandbox_id=sandbox.id,
        timeout_s=run.options.timeout_s,
        isolation=run.options.isolation,
        force=run.options.force,
    )


def _mission_run(layout: Layout, job: RuntimeJob, base: str, token: CancelToken) -> MissionRun:
    write_text_atomic(layout.mission_file(job.mission_id), job.mission_text)
    mission = load_mission(layout, job.mission_id).mission
    manifest = AdapterManifest.model_validate(job.manifest)
    options = RunOptions(
        force=job.force, timeout_s=job.timeout_s, base=base, isolation=job.isolation,
        own={job.sandbox_id},
    )  # fmt: skip
    return MissionRun(layout, mission, manifest, options, token)


def _outcome_data(outcome: RunOutcome) -> dict[str, Any]:
    data = dataclasses.asdict(outcome)
    data.pop("sandbox", None)
    return data


def run_runtime_job(layout: Layout, job: RuntimeJob, base: str, token: CancelToken) -> JobResult:
    """On the worker, in ``layout`` (its workspace at ``base``)."""
    result = JobResult(job_id=job.job_id, kind="runtime", sandbox_id=job.sandbox_id)
    run = _mission_run(layout, job, base, token)
    adapter: Adapter | RunOutcome = run.preflight()  # this node's CLI: installed or blocked
    if isinstance(adapter, RunOutcome):
        result.outcome = _outcome_data(adapter)
        return result
    try:
        sandbox = create_sandbox(
            layout, job.mission_id, run.manifest.id, base=base, sandbox_id=job.sandbox_id
        )
    except UhError as exc:
        result.outcome = _outcome_data(
            RunOutcome(job.mission_id, run.manifest.id, "error", error=exc.one_line())
        )
        return result
    outcome = run.execute(adapter, sandbox)
    result.outcome = _outcome_data(outcome)
    records = sandbox_records(layout, sandbox)
    patch = records.diff_file(job.mission_id)
    result.patch = patch.read_bytes() if patch.is_file() else None
    folder = layout.sandbox_evidence(sandbox.id)
    names = [f"sandboxes/{sandbox.id}/{n}" for n in evidence.listing(folder)]
    result.evidence = evidence.pack(layout.harness, names)
    result.roots = {"root": str(layout.root), "trees": str(layout.sandbox_trees)}
    return result


def failed_outcome(mission_id: str, runtime: str, sandbox: SandboxEntry, why: str) -> RunOutcome:
    return RunOutcome(mission_id, runtime, "error", sandbox=sandbox, error=why)


def land_runtime(
    layout: Layout, sandbox: SandboxEntry, job: RuntimeJob, result: JobResult, node: NodeInfo
) -> RunOutcome:
    """On the head: the worker's records and change into ``sandbox``; the outcome."""
    data = dict(result.outcome)
    runtime = str(data.get("runtime") or job.manifest.get("id") or "?")
    if result.error is not None or not data:
        why = result.error or "the job returned no outcome"
        return failed_outcome(job.mission_id, runtime, sandbox, f"on {node.label()}: {why}")
    outcome = RunOutcome(**{**data, "sandbox": sandbox})
    if outcome.status in ("blocked",) and not result.evidence:
        return outcome  # never started there: nothing to land
    evidence.unpack(layout.harness, result.evidence, (f"sandboxes/{sandbox.id}/",))
    worktree = entry_path(layout, sandbox)
    if result.patch:
        applied = git_run(
            worktree, "apply", "--binary", "--whitespace=nowarn", "-", stdin=result.patch
        )
        if applied.returncode != 0:
            said = applied.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
            outcome.status = "error"
            outcome.error = f"the change from {node.label()} did not apply: {' '.join(said)}"
            return outcome
    patch = sandbox_records(layout, sandbox).diff_file(job.mission_id)
    try:
        landed, _paths, _files = diff_summary(layout, worktree, patch, sandbox.base_commit)
    except UhError as exc:
        outcome.status, outcome.error = "error", f"the landed change: {exc.one_line()}"
        return outcome
    if outcome.diff_hash is not None and landed != outcome.diff_hash:
        outcome.status = "error"
        outcome.error = (
            f"the change landed from {node.label()} hashes {landed}, "
            f"the worker's {outcome.diff_hash}"
        )
    return outcome
