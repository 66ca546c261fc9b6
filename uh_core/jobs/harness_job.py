"""One mission of ``harness run`` as a job: run where a worker is, landed on the head.

The worker derives the agent and the profiles from the run's settings and its workspace
(the base commit), exactly as ``prepare`` does, then runs ``run_requirement`` — the loop's
own code: worktree, prompt, agent, gate, retries, and on green the one commit — in that
workspace. It returns the record, that commit as a bundle, and what the run wrote under
``.harness/`` (the sandbox's records and evidence, the prompts sent).

The head lands it as a local run would leave it: a sandbox of the same id holding the last
attempt's work, the records beside it, and ``harness/<id>`` moved from the base commit to
the worker's commit — only when that commit's parent is the base and the branch has not
moved meanwhile. Paths in the record name the head's folders.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from typing import Any

from uh_core.errors import ExecutorError, UhError
from uh_core.git import git, git_run, resolve_commit
from uh_core.harness import workspace
from uh_core.harness.agent import agent_spec
from uh_core.harness.config import Settings, load_config
from uh_core.harness.deps import Deps
from uh_core.harness.profiles import load_profiles
from uh_core.harness.prompt import branch_name
from uh_core.harness.requirement import run_requirement
from uh_core.jobs import evidence
from uh_core.jobs.model import HarnessJob, JobResult, NodeInfo
from uh_core.jobs.source import bundle_branch, unbundle
from uh_core.layout import Layout
from uh_core.missions import load_mission
from uh_core.models.ledger import RequirementRecord
from uh_core.models.sandbox import SandboxEntry
from uh_core.runtime.run import CancelToken
from uh_core.sandbox.worktree import create_sandbox, discard_sandbox, entry_path
from uh_core.security import guard


def settings_data(settings: Settings) -> dict[str, Any]:
    return dataclasses.asdict(settings)


def settings_from(data: dict[str, Any]) -> Settings:
    fields = {f.name for f in dataclasses.fields(Settings)}
    values: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in fields
    }
    return Settings(**values)


def harness_job(job_id: str, deps: Deps, mission_id: str) -> HarnessJob:
    # A worker's workspace has no branch yet: it never needs --force or --resume.
    settings = dataclasses.replace(deps.settings, force=False, resume=False)
    return HarnessJob(
        job_id=job_id, mission_id=mission_id, run_id=deps.run_id,
        base_commit=deps.base_commit, settings=settings_data(settings),
    )  # fmt: skip


def _prefixes(mission_id: str, sandbox_id: str | None) -> tuple[str, ...]:
    own = (f"sandboxes/{sandbox_id}/",) if sandbox_id else ()
    return (*own, "prompts/", f"missions/{mission_id}/runs/")


def run_harness_job(
    layout: Layout, job: HarnessJob, token: CancelToken, progress: Callable[[str], None]
) -> JobResult:
    """On the worker, in ``layout`` (its workspace at the base commit)."""
    settings = settings_from(job.settings)
    config = load_config(layout)
    profiles = load_profiles(layout, config)
    spec = agent_spec(layout, settings.agent, settings.runtime, settings)
    specs = {
        p.name: agent_spec(layout, p.agent, p.runtime, settings)
        for p in profiles
        if p.agent is not None or p.runtime is not None
    }
    mission = load_mission(layout, job.mission_id).mission
    before = evidence.listing(layout.harness)
    deps = Deps(
        layout, settings, spec, job.base_commit, job.run_id, token, progress,
        profiles=profiles, specs=specs, isolation=guard.resolve(settings.isolation),
    )  # fmt: skip
    started = time.monotonic()
    record = run_requirement(deps, mission)
    ran = time.monotonic()
    result = JobResult(job_id=job.job_id, kind="harness", sandbox_id=record.sandbox_id)
    result.outcome = record.model_dump(mode="json")
    if record.outcome == "pass" and record.commit:
        result.bundle = bundle_branch(layout, branch_name(mission.id), job.base_commit)
    allowed = _prefixes(mission.id, record.sandbox_id)
    names = [n for n in evidence.written_since(layout.harness, before) if _inside(n, allowed)]
    result.evidence = evidence.pack(layout.harness, names)
    result.roots = {"root": str(layout.root), "trees": str(layout.sandbox_trees)}
    result.timings = {"run_s": round(ran - started, 3), "pack_s": round(time.monotonic() - ran, 3)}
    return result


def _inside(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name.startswith(p) for p in prefixes)


def _translate(data: dict[str, Any], roots: dict[str, str], layout: Layout) -> dict[str, Any]:
    """The worker's absolute paths in the record, as the head's."""
    text = json.dumps(data)
    for key, here in (("trees", str(layout.sandbox_trees)), ("root", str(layout.root))):
        there = roots.get(key)
        if there:
            text = text.replace(json.dumps(there)[1:-1], json.dumps(here)[1:-1])
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _last_patch(record: RequirementRecord, job: HarnessJob, sandbox_id: str) -> str | None:
    if not record.attempts:
        return None
    n = record.attempts[-1].attempt
    return (
        f"sandboxes/{sandbox_id}/missions/{job.mission_id}/runs/{job.run_id}/attempt-{n}/diff.patch"
    )


def land_requirement(
    layout: Layout, job: HarnessJob, result: JobResult, node: NodeInfo, runtime: str
) -> RequirementRecord:
    """On the head; ``harness/<id>`` already points at the base commit (claimed at
    dispatch). Raises ExecutorError when the result cannot land as it says."""
    record = RequirementRecord.model_validate(_translate(result.outcome, result.roots, layout))
    record.node = node.label()
    sandbox_id = result.sandbox_id
    if sandbox_id is None:
        return record  # skipped or refused before a sandbox existed
    evidence.check(result.evidence, _prefixes(job.mission_id, sandbox_id))  # before anything
    branch = branch_name(job.mission_id)
    entry = create_sandbox(
        layout, job.mission_id, runtime, base=job.base_commit, kind="harness",
        branch=branch, sandbox_id=sandbox_id,
    )  # fmt: skip
    try:
        _fill(layout, job, result, node, record, entry)
    except BaseException:
        discard_sandbox(layout, entry.id)  # nothing half-landed stays behind
        raise
    status = "passed" if record.outcome == "pass" else "parked"
    workspace.set_sandbox_status(layout, entry.id, status)
    return record


def _fill(
    layout: Layout, job: HarnessJob, result: JobResult, node: NodeInfo,
    record: RequirementRecord, entry: SandboxEntry,
) -> None:  # fmt: skip
    """The evidence, the last attempt's work in the sandbox, and on green the commit."""
    sandbox_id = entry.id
    branch = branch_name(job.mission_id)
    evidence.unpack(layout.harness, result.evidence, _prefixes(job.mission_id, sandbox_id))
    patch = _last_patch(record, job, sandbox_id)
    worktree = entry_path(layout, entry)
    patch_file = layout.harness / patch if patch is not None else None
    if patch_file is not None and patch_file.is_file() and patch_file.stat().st_size > 0:
        applied = git_run(worktree, "apply", "--binary", "--whitespace=nowarn", str(patch_file))
        if applied.returncode != 0:
            raise ExecutorError(f"the last attempt's change from {node.label()} did not apply")
    record.sandbox_id, record.worktree = entry.id, entry.worktree
    if record.outcome == "pass":
        _land_commit(layout, job, result, branch, record)


def _land_commit(
    layout: Layout, job: HarnessJob, result: JobResult, branch: str, record: RequirementRecord
) -> None:
    if result.bundle is None or record.commit is None:
        raise ExecutorError("the mission passed on the worker but no commit came back")
    heads = unbundle(layout, result.bundle)
    commit = heads.get(f"refs/heads/{branch}")
    if commit != record.commit:
        raise ExecutorError(f"the bundle's {branch} is {commit}, the record says {record.commit}")
    parents = git(layout.root, "rev-list", "--parents", "-n", "1", commit).split()[1:]
    if parents != [job.base_commit]:
        raise ExecutorError(f"the worker's commit {commit[:12]} is not one commit on the base")
    try:
        git(layout.root, "update-ref", "-m", f"uh harness: {job.mission_id}",
            f"refs/heads/{branch}", commit, job.base_commit)  # fmt: skip
    except UhError as exc:
        raise ExecutorError(f"{branch} moved while the mission ran: {exc.one_line()}") from None
    assert resolve_commit(layout.root, branch) == commit
