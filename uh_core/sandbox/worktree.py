"""Creating, listing and discarding sandboxes.

A sandbox is a git repository of its own, outside the operator's work tree (under
``Layout.sandbox_trees``, a per-repository state folder): ``git init`` with no template
(no hooks), the operator's object store borrowed through ``objects/info/alternates`` (so
nothing is copied), and the base commit checked out. The agent may commit, branch, stage
and configure it freely: its ``.git`` is its own, and the engine never runs git with it
(it judges the files by content against the base commit, with the operator's git
directory — ``uh_core.sandbox.snapshot``). The operator's hooks, configuration and refs are
out of its reach by construction; what uh records about a sandbox stays in the operator's
``.harness/sandboxes/<id>/``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from pathlib import Path
from typing import Literal

from uh_core.clock import now, timestamp
from uh_core.errors import NotFoundError, SandboxError, UhError
from uh_core.git import common_dir, git, identity_config, is_repository, resolve_commit
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


def _used_file(layout: Layout) -> Path:
    """Every sandbox id this repository has reserved, one a line (under the state folder):
    a sandbox made in the same second as one discarded never takes its id, so a ledger or
    record naming the old one never names the new."""
    return layout.state_dir / "sandbox-ids"


def _used_ids(layout: Layout) -> set[str]:
    try:
        text = _used_file(layout).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    return set(text.split())


def _note_used(layout: Layout, sandbox_id: str) -> None:
    path = _used_file(layout)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{sandbox_id}\n".encode())
        finally:
            os.close(fd)
    except OSError:
        pass  # only a guard against reuse within one second; the index still refuses taken ids


def sandbox_path(layout: Layout, sandbox_id: str) -> Path:
    return layout.sandbox_trees / check_id(sandbox_id, "sandbox")


def entry_path(layout: Layout, entry: SandboxEntry) -> Path:
    """The sandbox's work tree (old index entries name it relative to the root)."""
    return Path(os.path.normpath(layout.root / entry.worktree))


def sandbox_records(layout: Layout, entry: SandboxEntry) -> Layout:
    """The sandbox as a layout: commands run in its work tree, records go to the operator's
    ``.harness/sandboxes/<id>/`` (never inside the sandbox, where the agent writes)."""
    return Layout(entry_path(layout, entry), records=layout.sandbox_evidence(entry.id))


def _outside_root(layout: Layout) -> Path:
    trees = layout.sandbox_trees
    real_root, real_trees = os.path.realpath(layout.root), os.path.realpath(trees)
    if real_trees == real_root or real_trees.startswith(real_root + os.sep):
        raise SandboxError(
            f"the sandbox folder {trees} is inside the repository {layout.root}",
            fix="point UH_STATE_DIR outside the repository",
        )
    return trees


def _identity(layout: Layout) -> list[tuple[str, str]]:
    """The operator's commit identity, so an agent's own commits in its sandbox work
    (``uh_core.git.identity_config``: the engine's git reads no global configuration)."""
    return list(identity_config(layout.root).items())


def init_repository(layout: Layout, path: Path, commit: str, branch: str | None) -> None:
    """A repository at ``path`` borrowing the operator's objects, with ``commit`` checked
    out (detached, or on a new local ``branch``)."""
    objects = common_dir(layout.root) / "objects"
    git(path.parent, "init", "-q", "--template=", str(path))
    alternates = path / ".git" / "objects" / "info" / "alternates"
    alternates.parent.mkdir(parents=True, exist_ok=True)
    alternates.write_text(f"{objects}\n", encoding="utf-8")
    for key, value in _identity(layout):
        git(path, "config", key, value)
    if branch:
        git(path, "checkout", "-q", "-b", branch, commit)
    else:
        git(path, "checkout", "-q", "--detach", commit)


def create_sandbox(
    layout: Layout,
    mission_id: str,
    runtime: str,
    *,
    base: str = "HEAD",
    kind: Literal["runtime", "harness"] = "runtime",
    branch: str | None = None,
    sandbox_id: str | None = None,
) -> SandboxEntry:
    """A new sandbox repository of ``base`` (detached, or on a new local ``branch``),
    recorded in the index. ``sandbox_id``: this id (a job landing where a worker ran it
    under the same id), refused when taken."""
    check_id(mission_id, "mission")
    check_id(runtime, "runtime")
    if not is_repository(layout.root):
        raise SandboxError(f"{layout.root} is not a git repository: sandboxes are git clones")
    base_commit = resolve_commit(layout.root, base)
    trees = _outside_root(layout)
    with locked_index(layout) as index:
        taken = {s.id for s in index.sandboxes}
        taken |= {p.name for p in layout.sandboxes_dir.iterdir() if p.is_dir()}
        if trees.is_dir():
            taken |= {p.name for p in trees.iterdir()}
        if sandbox_id is None:
            taken |= _used_ids(layout)  # a discarded sandbox's id names only it, ever
            sandbox_id = _reserve_id(taken, mission_id, runtime)
            _note_used(layout, sandbox_id)
        elif check_id(sandbox_id, "sandbox") in taken:
            raise SandboxError(f"sandbox {sandbox_id} exists already: a job cannot land there")
        path = sandbox_path(layout, sandbox_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            layout.sandbox_evidence(sandbox_id).mkdir(parents=True)
        except OSError as exc:
            raise SandboxError(f"cannot create sandbox {sandbox_id}: {exc.strerror}") from None
        entry = SandboxEntry(
            id=sandbox_id,
            mission_id=mission_id,
            runtime=runtime,
            kind=kind,
            backend="git-clone",
            base_commit=base_commit,
            branch=branch,
            worktree=str(path),
            created_at=timestamp(),
            status="creating",
        )
        index.sandboxes.append(entry)
    try:
        init_repository(layout, path, base_commit, branch)
    except UhError as exc:
        _forget(layout, sandbox_id)
        remove_tree(path)
        remove_tree(layout.sandbox_evidence(sandbox_id))
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


def remove_tree(path: Path) -> None:
    """Remove ``path`` whole, folders an agent made read-only included; never follows a
    symlink out of it."""

    def writable_then_retry(func: object, failed: str, _exc: object) -> None:
        parent = os.path.dirname(failed)
        try:
            os.chmod(parent, stat.S_IRWXU)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, stat.S_IRWXU)
                shutil.rmtree(failed, ignore_errors=True)
            else:
                os.unlink(failed)
        except OSError:
            pass

    if path.is_symlink():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path, onerror=writable_then_retry)


def list_sandboxes(layout: Layout) -> list[SandboxEntry]:
    return list(read_index(layout).sandboxes)


def get_sandbox(layout: Layout, sandbox_id: str) -> SandboxEntry:
    check_id(sandbox_id, "sandbox")
    entry = read_index(layout).find(sandbox_id)
    if entry is None:
        raise NotFoundError(f"unknown sandbox {sandbox_id!r}", fix="run `uh-core sandbox list`")
    return entry


def discard_sandbox(layout: Layout, sandbox_id: str) -> SandboxEntry:
    """Remove the sandbox (uncommitted work in it is lost), its records and its entry."""
    entry = get_sandbox(layout, sandbox_id)
    path = entry_path(layout, entry)
    if entry.backend == "git-worktree":  # made by an older uh: a linked worktree
        if path.exists():
            with contextlib.suppress(UhError):
                git(layout.root, "worktree", "remove", "--force", "--force", str(path))
        remove_tree(path)
        git(layout.root, "worktree", "prune")
    else:
        remove_tree(path)
    remove_tree(layout.sandbox_evidence(sandbox_id))
    _forget(layout, sandbox_id)
    return entry


_SAFE_BRANCH = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._/-]*\Z")


def check_branch(name: str) -> str:
    if not _SAFE_BRANCH.match(name) or ".." in name or name.endswith((".lock", "/")):
        raise SandboxError(f"invalid branch name {name!r}")
    return name
