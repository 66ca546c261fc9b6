"""Creating, listing and discarding sandboxes (git worktrees under ``.harness/sandboxes/``)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Literal

from uh_core.clock import now, timestamp
from uh_core.errors import NotFoundError, SandboxError, UhError
from uh_core.git import git, is_repository, resolve_commit
from uh_core.ids import check_id
from uh_core.layout import Layout
from uh_core.models.sandbox import SandboxEntry
from uh_core.sandbox.index import locked_index, read_index


def _reserve_id(taken: set[str], mission_id: str, runtime: str) -> str:
    stem = f"sbx-{mission_id}-{runtime}-{now().strftime('%Y%m%d%H%M%S')}"
    candidate, n = stem, 1
    while candidate in taken:
        n += 1
        candidate = f"{stem}-{n}"
    return candidate


def sandbox_path(layout: Layout, sandbox_id: str) -> Path:
    return layout.sandboxes_dir / check_id(sandbox_id, "sandbox") / "worktree"


def create_sandbox(
    layout: Layout,
    mission_id: str,
    runtime: str,
    *,
    base: str = "HEAD",
    kind: Literal["runtime", "harness"] = "runtime",
    branch: str | None = None,
) -> SandboxEntry:
    """A new worktree of ``base`` (detached, or on a new ``branch``), recorded in the index."""
    check_id(mission_id, "mission")
    check_id(runtime, "runtime")
    if not is_repository(layout.root):
        raise SandboxError(f"{layout.root} is not a git repository: sandboxes are git worktrees")
    base_commit = resolve_commit(layout.root, base)
    with locked_index(layout) as index:
        taken = {s.id for s in index.sandboxes}
        taken |= {p.name for p in layout.sandboxes_dir.iterdir() if p.is_dir()}
        sandbox_id = _reserve_id(taken, mission_id, runtime)
        path = sandbox_path(layout, sandbox_id)
        try:
            path.parent.mkdir(parents=True)
        except OSError as exc:
            raise SandboxError(f"cannot create {layout.rel(path.parent)}: {exc.strerror}") from None
        entry = SandboxEntry(
            id=sandbox_id,
            mission_id=mission_id,
            runtime=runtime,
            kind=kind,
            base_commit=base_commit,
            branch=branch,
            worktree=layout.rel(path),
            created_at=timestamp(),
            status="creating",
        )
        index.sandboxes.append(entry)
    try:
        args = ["worktree", "add", "--quiet"]
        args += ["-b", branch] if branch else ["--detach"]
        git(layout.root, *args, str(path), base_commit)
    except UhError as exc:
        _forget(layout, sandbox_id)
        shutil.rmtree(path.parent, ignore_errors=True)
        raise SandboxError(f"cannot create sandbox {sandbox_id}: {exc.one_line()}") from None
    with locked_index(layout) as index:
        found = index.find(sandbox_id)
        if found is not None:
            found.status = "active"
            entry = found
    return entry


def _forget(layout: Layout, sandbox_id: str) -> None:
    with locked_index(layout) as index:
        index.sandboxes = [s for s in index.sandboxes if s.id != sandbox_id]


def list_sandboxes(layout: Layout) -> list[SandboxEntry]:
    return list(read_index(layout).sandboxes)


def get_sandbox(layout: Layout, sandbox_id: str) -> SandboxEntry:
    check_id(sandbox_id, "sandbox")
    entry = read_index(layout).find(sandbox_id)
    if entry is None:
        raise NotFoundError(f"unknown sandbox {sandbox_id!r}", fix="run `uh-core sandbox list`")
    return entry


def discard_sandbox(layout: Layout, sandbox_id: str) -> SandboxEntry:
    """Remove the worktree (uncommitted work in it is lost) and its index entry."""
    entry = get_sandbox(layout, sandbox_id)
    path = sandbox_path(layout, sandbox_id)
    if path.exists():
        try:
            git(layout.root, "worktree", "remove", "--force", "--force", str(path))
        except UhError:
            shutil.rmtree(path, ignore_errors=True)
    shutil.rmtree(path.parent, ignore_errors=True)
    git(layout.root, "worktree", "prune")
    _forget(layout, sandbox_id)
    return entry


_SAFE_BRANCH = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._/-]*\Z")


def check_branch(name: str) -> str:
    if not _SAFE_BRANCH.match(name) or ".." in name or name.endswith((".lock", "/")):
        raise SandboxError(f"invalid branch name {name!r}")
    return name
