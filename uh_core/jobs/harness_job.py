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

What a worker sends is checked, never trusted (``uh_core.jobs.objects``): the worker
re-hashes its commit's objects before bundling them, the head re-hashes every object it
receives in a quarantine, and lands the commit only when it is whole, one commit on the
base, with the tree the gate judged — and, unless the run trusts its workers, when the
head's own re-judge of it (``rejudge``) is green too. Anything else is ``tampered``: the
record says why and nothing lands.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uh_core.errors import ExecutorError, UhError
from uh_core.git import git, git_run, resolve_commit
from uh_core.harness import workspace
from uh_core.harness.agent import agent_spec
from uh_core.harness.config import Settings, load_config
from uh_core.harness.deps import Deps
from uh_core.harness.done import done_text
from uh_core.harness.profiles import load_profiles
from uh_core.harness.prompt import branch_name
from uh_core.harness.requirement import run_requirement
from uh_core.jobs import evidence
from uh_core.jobs.model import HarnessJob, JobResult, NodeInfo
from uh_core.jobs.objects import Tampered, TreeCheck, planted, receive
from uh_core.jobs.source import bundle_branch
from uh_core.layout import Layout
from uh_core.missions import load_mission
from uh_core.models.ledger import RequirementRecord
from uh_core.models.sandbox import SandboxEntry
from uh_core.runtime.run import CancelToken
from uh_core.sandbox.worktree import create_sandbox, discard_sandbox, entry_path
from uh_core.security import guard

# The head's re-judge of a worker's commit: None when it agrees, else what it says.
Rejudge = Callable[[str], str | None]


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
    if settings.budget_seconds is not None:  # a provider's limit waits no longer than the run
        deps.deadline = started + settings.budget_seconds
    record = run_requirement(deps, mission)
    ran = time.monotonic()
    result = JobResult(job_id=job.job_id, kind="harness", sandbox_id=record.sandbox_id)
    if record.outcome == "pass" and record.commit:
        wrong = planted(layout.root, record.commit, job.base_commit)
        if wrong:  # the store holds other content than the gate judged: never shipped
            mark_tampered(record, "the worker's object store holds planted objects: " + wrong[0])
        else:
            result.bundle = bundle_branch(layout, branch_name(mission.id), job.base_commit)
    result.outcome = record.model_dump(mode="json")
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


def mark_tampered(record: RequirementRecord, reason: str) -> RequirementRecord:
    """``record`` refused as a local run refuses a tampered round: its last attempt
    ``tampered`` naming ``reason``, the mission red, no commit."""
    record.outcome, record.commit, record.failing_stage = "fail", None, None
    record.reason = f"tampered: {reason}"
    if record.attempts:
        last = record.attempts[-1]
        last.outcome, last.stage = "tampered", None
        last.tampered.append(reason)
        last.verdict = f"TAMPERED: {reason}"
    return record


def is_tampered(record: RequirementRecord) -> bool:
    return bool(record.attempts) and record.attempts[-1].outcome == "tampered"


def land_requirement(
    layout: Layout, job: HarnessJob, result: JobResult, node: NodeInfo, runtime: str,
    rejudge: Rejudge | None = None,
) -> RequirementRecord:  # fmt: skip
    """On the head; ``harness/<id>`` already points at the base commit (claimed at
    dispatch). A green lands only once its objects are checked (``receive``) and, with
    ``rejudge``, the head agrees; a tampered record lands nothing (``is_tampered``).
    Raises ExecutorError when the result cannot land as it says."""
    record = RequirementRecord.model_validate(_translate(result.outcome, result.roots, layout))
    record.node = node.label()
    sandbox_id = result.sandbox_id
    if sandbox_id is None or is_tampered(record):
        return record  # skipped or refused before a sandbox existed; or refused on the worker
    evidence.check(result.evidence, _prefixes(job.mission_id, sandbox_id))  # before anything
    if record.outcome == "pass":
        try:
            _receive(layout, job, result, record, rejudge)
        except Tampered as exc:
            return mark_tampered(record, exc.message)
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


def _receive(
    layout: Layout, job: HarnessJob, result: JobResult, record: RequirementRecord,
    rejudge: Rejudge | None,
) -> None:  # fmt: skip
    """The worker's commit, checked, in the operator's store (no ref yet); then the
    head's own verdict on it. Raises Tampered."""
    if result.bundle is None or record.commit is None:
        raise Tampered("the mission passed on the worker but no commit came back")
    tree = record.attempts[-1].tree if record.attempts else None
    if tree is None:
        raise Tampered("the mission passed on the worker but its record names no judged tree")
    ref = f"refs/heads/{branch_name(job.mission_id)}"
    check = holds_judged(job.mission_id, tree, job.base_commit)
    commit = receive(layout.root, result.bundle, ref, record.commit, job.base_commit, check)
    said = rejudge(commit) if rejudge is not None else None
    if said is not None:
        raise Tampered(f"the worker said green; the head's re-judge of {commit[:12]} says: {said}")


def holds_judged(mission_id: str, judged: str, base: str) -> TreeCheck:
    """Whether a commit holds exactly the ``judged`` tree with the mission marked done, as
    ``workspace.commit_judged`` makes it: its tree with ``mission.yaml`` put back as at the
    base must be ``judged``, and its ``mission.yaml`` the base's marked done."""
    path = f".harness/missions/{mission_id}/mission.yaml"

    def check(root: Path, env: dict[str, str], commit: str) -> str | None:
        landed = git(root, "rev-parse", f"{commit}^{{tree}}", env=env).strip()
        at_base = git(root, "ls-tree", base, "--", path, env=env).split()
        with tempfile.TemporaryDirectory(prefix="uh-judged-") as scratch:
            index = {**env, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
            git(root, "read-tree", landed, env=index)
            if at_base:
                mode, blob = at_base[0], at_base[2]
                git(
                    root, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=index
                )
            else:
                git(root, "update-index", "--force-remove", "--", path, env=index)
            undone = git(root, "write-tree", env=index).strip()  # into the quarantine
        if undone != judged:
            return (
                f"the worker's commit {commit[:12]} holds tree {landed[:12]}, not the tree "
                f"the gate judged ({judged[:12]}) with the mission marked done"
            )
        if at_base and landed != judged:
            text = git(root, "cat-file", "blob", at_base[2], env=env)
            want = git(root, "hash-object", "--stdin", stdin=done_text(text).encode()).strip()
            if git(root, "rev-parse", f"{commit}:{path}", env=env).strip() != want:
                return f"{path} in the worker's commit is not the base's marked done"
        return None

    return check


def _land_commit(
    layout: Layout, job: HarnessJob, result: JobResult, branch: str, record: RequirementRecord
) -> None:
    commit = record.commit  # its objects checked and in the store (_receive)
    assert commit is not None
    try:
        git(layout.root, "update-ref", "-m", f"uh harness: {job.mission_id}",
            f"refs/heads/{branch}", commit, job.base_commit)  # fmt: skip
    except UhError as exc:
        raise ExecutorError(f"{branch} moved while the mission ran: {exc.one_line()}") from None
    assert resolve_commit(layout.root, branch) == commit
