"""What a promotion promotes, and whether it was verified.

A **sandbox**: its files (whatever the agent committed, staged or left untracked, ignored
files aside) against the base commit recorded in the index, ``.harness/`` left out — the same
change ``mission run`` hashed — snapshotted as a tree with the operator's git directory (the
sandbox's own ``.git`` is the agent's and is never used). Its verification is the record uh
wrote in the operator's ``.harness/sandboxes/<sbx>/``, and only when the sandbox's index
entry was stamped by that same verify with the tree it judged: a record the agent planted is
no evidence. When the sandbox's tree is no longer the judged one, the verification is
``stale``.

A **branch** (``harness/<id>``): its commits since the merge-base with the main checkout's
HEAD, squashed. Its verification is the harness gate's: the newest ledger that judged the
branch; ``passed`` only while the branch's tip is still the gate's green commit.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from uh_core.compat.readers import load_verification
from uh_core.diff.capture import Snapshot, commits_diff_hash, snapshot_worktree
from uh_core.errors import NotFoundError, UhError, UsageError
from uh_core.git import common_dir, git, resolve_commit, run_git
from uh_core.harness.ledger import list_ledgers, read_ledger
from uh_core.harness.workspace import branch_exists, current_branch, fork_point
from uh_core.layout import Layout
from uh_core.models.ledger import RequirementRecord, fail_to_pass_of
from uh_core.models.promotion import SourceKind, VerificationStatus
from uh_core.models.sandbox import SandboxEntry
from uh_core.sandbox.human import human_lines
from uh_core.sandbox.worktree import (
    check_branch,
    entry_path,
    get_sandbox,
    list_sandboxes,
    sandbox_records,
)


@dataclass(frozen=True)
class Verified:
    status: VerificationStatus
    run_id: str | None
    detail: str
    judged_tree: str | None = None  # the tree the gate judged (a branch: before "done")
    unconfined: str | None = None  # why its checks ran unconfined, when they did
    proof: str | None = None  # the judge's fail-to-pass line, when it made one
    # what humans did in the rounds that passed: trailers (Uh-Steered: 2, Uh-Answered: 1)
    human: tuple[str, ...] = ()


@dataclass(frozen=True)
class Source:
    kind: SourceKind
    mission_id: str
    base_commit: str
    tree: str  # the whole source as a tree object
    diff_hash: str
    verified: Verified
    sandbox_id: str | None = None
    branch: str | None = None
    runtime: str | None = None
    source_commit: str | None = None

    @property
    def exclude_harness(self) -> bool:
        """A sandbox's ``.harness/`` is the harness's state; a branch's commits are the work."""
        return self.kind == "sandbox"

    @property
    def label(self) -> str:
        if self.kind == "branch":
            return f"branch {self.branch}"
        runtime = f" (runtime {self.runtime})" if self.runtime else ""
        return f"sandbox {self.sandbox_id}{runtime}"


def harness_branch(mission_id: str) -> str:
    return f"harness/{mission_id}"


def choices(layout: Layout, mission_id: str) -> list[str]:
    """What could be promoted for ``mission_id``, as the flags that name each."""
    branch = harness_branch(mission_id)
    has_branch = branch_exists(layout.root, branch)
    found = [
        f"--sandbox {entry.id}"
        for entry in list_sandboxes(layout)
        if entry.mission_id == mission_id and not (entry.branch == branch and has_branch)
    ]
    return [*found, f"--branch {branch}"] if has_branch else found


def pick(layout: Layout, mission_id: str) -> tuple[str | None, str | None]:
    """(sandbox, branch) when the mission has exactly one thing to promote; else an error."""
    found = choices(layout, mission_id)
    if not found:
        raise NotFoundError(
            f"nothing to promote for mission {mission_id!r}: no sandbox and no branch "
            f"{harness_branch(mission_id)}",
            fix=f"run it first (uh-core mission run {mission_id} --runtime R, or harness run)",
        )
    if len(found) > 1:
        raise UsageError(
            f"mission {mission_id!r} has {len(found)} things to promote: {', '.join(found)}",
            fix="name one with --sandbox SBX or --branch harness/ID",
        )
    flag, value = found[0].split(" ", 1)
    return (value, None) if flag == "--sandbox" else (None, value)


def resolve(layout: Layout, mission_id: str, sandbox_id: str | None, branch: str | None) -> Source:
    if sandbox_id is not None and branch is not None:
        raise UsageError("--sandbox and --branch exclude each other", fix="give one of them")
    if sandbox_id is None and branch is None:
        sandbox_id, branch = pick(layout, mission_id)
    if sandbox_id is not None:
        source = _sandbox(layout, mission_id, get_sandbox(layout, sandbox_id))
        by_hand = human_lines(layout, sandbox_id)  # a human's edits in it, said in the commit
        if by_hand:
            human = (*source.verified.human, f"Uh-Human-Lines: {by_hand}")
            source = replace(source, verified=replace(source.verified, human=human))
    else:
        assert branch is not None
        source = _branch(layout, mission_id, branch)
    return _unless_tampered(layout, source)


def _unless_tampered(layout: Layout, source: Source) -> Source:
    """While a harness run's ledger says an agent changed the operator's repository, no
    record in it is evidence (the agent could have written any of them): nothing is
    promoted without ``--force`` until the operator has looked."""
    for path in reversed(list_ledgers(layout)):
        try:
            ledger = read_ledger(path)
        except UhError:
            continue
        if ledger.tampered:
            detail = (
                f"harness run {ledger.run_id} was TAMPERED ({ledger.tampered[0]}"
                f"{' …' if len(ledger.tampered) > 1 else ''}): no record here is evidence "
                f"until you have inspected the repository ({layout.rel(path)})"
            )
            return replace(source, verified=Verified("unverified", None, detail))
    return source


def _sandbox(layout: Layout, mission_id: str, entry: SandboxEntry) -> Source:
    if entry.mission_id != mission_id:
        raise UsageError(
            f"sandbox {entry.id} belongs to mission {entry.mission_id!r}, not {mission_id!r}",
            fix=f"uh-core promote {entry.mission_id} --sandbox {entry.id}",
        )
    worktree = entry_path(layout, entry)
    if not worktree.is_dir():
        raise NotFoundError(
            f"sandbox {entry.id}: its worktree {entry.worktree} is gone",
            fix=f"nothing is left to promote; `uh-core sandbox discard {entry.id}` forgets it",
        )
    snap = snapshot_worktree(worktree, entry.base_commit, git_dir=common_dir(layout.root))
    return Source(
        kind="sandbox",
        mission_id=mission_id,
        base_commit=snap.base_commit,
        tree=snap.tree,
        diff_hash=snap.diff_hash,
        verified=_sandbox_verified(layout, mission_id, entry, snap),
        sandbox_id=entry.id,
        branch=entry.branch,
        runtime=entry.runtime,
        source_commit=None,
    )


def _sandbox_verified(
    layout: Layout, mission_id: str, entry: SandboxEntry, snap: Snapshot
) -> Verified:
    path = sandbox_records(layout, entry).verification_file(mission_id)
    if not path.is_file() or entry.verify_run_id is None:
        return Verified("unverified", None, "never verified")
    try:
        result = load_verification(path, layout.rel(path))
    except UhError as exc:
        return Verified("unverified", None, f"unreadable: {exc.one_line()}")
    if (
        result.run_id != entry.verify_run_id
        or result.judged_tree is None
        or result.judged_tree != entry.verified_tree
    ):
        detail = (
            f"{layout.rel(path)} is not the record of the verify stamped on the sandbox "
            f"({entry.verify_run_id}): no evidence"
        )
        return Verified("unverified", None, detail)
    if result.judged_tree != snap.tree:
        detail = (
            f"{result.run_id} was {result.status} on diff {result.judged_diff_hash}; the sandbox "
            f"has changed since (diff {snap.diff_hash})"
        )
        return Verified("stale", result.run_id, detail)
    note = result.isolation or "unconfined: its checks ran in the sandbox, not in a room"
    loose = note if note.startswith("unconfined") else None
    proof = result.fail_to_pass.line() if result.fail_to_pass is not None else None
    return Verified(result.status, result.run_id, result.run_id, result.judged_tree, loose, proof)


def _branch(layout: Layout, mission_id: str, name: str) -> Source:
    expected = harness_branch(mission_id)
    if name != expected:
        check_branch(name)
        raise UsageError(
            f"--branch {name}: mission {mission_id!r} is promoted from {expected}",
            fix=f"--branch {expected}",
        )
    if not branch_exists(layout.root, name):
        raise NotFoundError(f"no branch {name}", fix="check `git branch --list 'harness/*'`")
    if current_branch(layout.root) == name:
        raise UsageError(
            f"{name} is checked out in the main checkout: there is nothing to promote it onto",
            fix="switch to the branch you promote onto (git switch main)",
        )
    tip = resolve_commit(layout.root, name)
    base = fork_point(layout, name)
    if base is None:
        raise UsageError(f"{name} shares no history with HEAD", fix="promote it by hand")
    tree = git(layout.root, "rev-parse", f"{tip}^{{tree}}").strip()
    return Source(
        kind="branch",
        mission_id=mission_id,
        base_commit=base,
        tree=tree,
        diff_hash=commits_diff_hash(layout.root, base, tip),
        verified=_branch_verified(layout, mission_id, name, tip),
        branch=name,
        source_commit=tip,
    )


def _is_ancestor(layout: Layout, commit: str, tip: str) -> bool:
    found = run_git(["merge-base", "--is-ancestor", commit, tip], cwd=layout.root, timeout=60)
    return found.returncode == 0


def _human_trailers(layout: Layout, req: RequirementRecord) -> tuple[str, ...]:
    """``Uh-Steered: N`` (messages delivered to its agents), ``Uh-Answered: N`` (answers to
    a hand-over these rounds continued), ``Uh-Human-Lines: N`` (lines changed by hand in its
    sandbox): a reviewer sees a human took part."""
    lines = [f"Uh-Steered: {req.steered}"] if req.steered else []
    lines += [f"Uh-Answered: {len(req.answers)}"] if req.answers else []
    by_hand = human_lines(layout, req.sandbox_id)
    lines += [f"Uh-Human-Lines: {by_hand}"] if by_hand else []
    return tuple(lines)


def _branch_verified(layout: Layout, mission_id: str, branch: str, tip: str) -> Verified:
    """The gate's verdict from the newest ledger that judged ``branch`` (pass or fail)."""
    for path in reversed(list_ledgers(layout)):
        try:
            ledger = read_ledger(path)
        except UhError:
            continue
        for req in ledger.requirements:
            if req.mission_id != mission_id or req.branch != branch:
                continue
            where = f"harness run {ledger.run_id}"
            # blocked with a hand-over: its rounds were judged and ended red (no progress, or
            # the last allowed round) — failed for promotion, as a plain fail is
            judged_red = req.outcome == "blocked" and req.handover is not None
            if req.outcome == "fail" or judged_red:
                stage = f" at {req.failing_stage}" if req.failing_stage else ""
                return Verified("failed", ledger.run_id, f"{where}: the gate failed{stage}")
            if req.outcome != "pass" or not req.commit:
                continue
            if req.commit == tip:
                last = req.attempts[-1] if req.attempts else None
                judged = last.tree if last is not None else None
                loose = (
                    (last.isolation_note or "unconfined")
                    if last and last.isolation == "none"
                    else None
                )
                found = fail_to_pass_of(last.stages) if last is not None else None
                proof = found.line() if found is not None else None
                detail = f"{where}: the gate passed"
                human = _human_trailers(layout, req)
                return Verified("passed", ledger.run_id, detail, judged, loose, proof, human)
            after = "has commits after" if _is_ancestor(layout, req.commit, tip) else "dropped"
            detail = f"{where}: the gate passed {req.commit[:12]}, but the branch {after} it"
            return Verified("stale", ledger.run_id, detail)
    return Verified("unverified", None, f"no harness run judged {branch}")
