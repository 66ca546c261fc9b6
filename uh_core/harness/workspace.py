"""Git around the loop: the clean-tree check, ``harness/<id>`` branches and their sandboxes,
and the one commit the harness makes (the judged tree plus ``status: done``, on the branch
only).

The main checkout is only read (status, HEAD) and given ``harness/<id>`` refs; its files,
index and HEAD are never changed. The agent works in a sandbox repository of its own (on a
local branch of the same name, which it may move as it likes); the operator's
``harness/<id>`` is moved only by the engine: created at the base commit when the mission
starts, and set to the one commit built from the tree the gate judged (``commit_judged``:
``commit-tree`` and ``update-ref``, no hook, no re-reading of the sandbox).
"""

from __future__ import annotations

from pathlib import Path

from uh_core.errors import HarnessError, UhError
from uh_core.git import git, is_repository, resolve_commit, run_git
from uh_core.harness.done import done_tree
from uh_core.layout import Layout
from uh_core.models.sandbox import SandboxEntry
from uh_core.sandbox.index import locked_index
from uh_core.sandbox.worktree import (
    check_branch,
    create_sandbox,
    discard_sandbox,
    entry_path,
    list_sandboxes,
)
from uh_core.yamldoc import parse_yaml

_FALLBACK_IDENTITY = {
    "GIT_AUTHOR_NAME": "uh harness",
    "GIT_AUTHOR_EMAIL": "harness@uh.invalid",
    "GIT_COMMITTER_NAME": "uh harness",
    "GIT_COMMITTER_EMAIL": "harness@uh.invalid",
}


def base_commit(layout: Layout) -> str:
    """HEAD of the main checkout, after checking the root is the top of a git repository."""
    root = layout.root
    if not is_repository(root):
        raise HarnessError(
            f"{root} is not a git repository: the harness works on branches",
            fix="`git init`, then commit .harness/ and the project (or pass --root a repository)",
        )
    top = Path(git(root, "rev-parse", "--show-toplevel").strip()).resolve()
    if top != root.resolve():
        raise HarnessError(
            f"{root} is not the top level of its git repository ({top})",
            fix="run the harness with --root at the repository's top level",
        )
    try:
        return resolve_commit(root, "HEAD")
    except UhError:
        raise HarnessError(
            f"{root} has no commit yet",
            fix="commit the missions first: the harness branches from HEAD",
        ) from None


def require_clean(layout: Layout) -> None:
    """Refuse a main checkout with changes; ignored files do not count."""
    out = git(layout.root, "status", "--porcelain=v1", "--untracked-files=all",
              "--ignore-submodules=none")  # fmt: skip
    lines = [line for line in out.splitlines() if line.strip()]
    if lines:
        shown = ", ".join(line[3:] for line in lines[:3])
        more = f" and {len(lines) - 3} more" if len(lines) > 3 else ""
        raise HarnessError(
            f"the main checkout has uncommitted changes: {shown}{more}",
            fix="commit or stash them (the harness branches from HEAD and never edits the "
            "main checkout)",
        )


# What the harness writes under the main checkout, as one example path each: all of it must
# be ignored by git, or a run would make the main tree dirty (uh-core init ignores them).
GENERATED_EXAMPLES = (
    ".harness/runs/harness-x.json",
    ".harness/prompts/x-attempt-1.md",
    ".harness/audit/events.ndjson",
    ".harness/false-failures.jsonl",
    ".harness/reports/x",
    ".harness/sandboxes/x/worktree",
    ".harness/missions/x/events.ndjson",
    ".harness/missions/x/runs/harness-x/attempt-1/junit.xml",
)


def require_ignored(layout: Layout, examples: tuple[str, ...] = GENERATED_EXAMPLES) -> None:
    """Refuse (exit 2) when git would see a file the harness generates in the main tree."""
    found = run_git(
        ["check-ignore", "--no-index", "--stdin"],
        cwd=layout.root,
        timeout=30,
        stdin="\n".join(examples).encode() + b"\n",
    )
    ignored = set(found.stdout.decode("utf-8", "replace").split())
    missing = [path for path in examples if path not in ignored]
    if missing:
        raise HarnessError(
            "git does not ignore what the harness generates: " + ", ".join(missing),
            fix="run `uh-core init` (it adds them to .harness/.gitignore) and commit it",
        )


def branch_exists(root: Path, branch: str) -> bool:
    found = run_git(
        ["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], cwd=root, timeout=30
    )
    return found.returncode == 0


def worktrees_on(root: Path, branch: str) -> list[Path]:
    paths: list[Path] = []
    current: Path | None = None
    for line in git(root, "worktree", "list", "--porcelain").splitlines():
        if line.startswith("worktree "):
            current = Path(line[len("worktree ") :])
        elif line == f"branch refs/heads/{branch}" and current is not None:
            paths.append(current)
    return paths


def remove_branch(layout: Layout, branch: str) -> str | None:
    """``--force``: delete ``branch`` and the worktrees holding it. A reason when it cannot."""
    check_branch(branch)
    for entry in list_sandboxes(layout):
        if entry.branch == branch:
            discard_sandbox(layout, entry.id)
    for path in worktrees_on(layout.root, branch):
        if path.resolve() == layout.root.resolve():
            return f"branch {branch} is checked out in the main checkout"
        git(layout.root, "worktree", "remove", "--force", "--force", str(path))
    git(layout.root, "worktree", "prune")
    git(layout.root, "branch", "-D", branch)
    return None


def create_worktree(layout: Layout, mission_id: str, runtime: str, base: str) -> SandboxEntry:
    """``harness/<id>`` created at ``base`` in the operator's repository (refused if it
    exists), and a sandbox of ``base`` on a local branch of that name."""
    branch = check_branch(f"harness/{mission_id}")
    git(layout.root, "update-ref", f"refs/heads/{branch}", base, "0" * 40)
    try:
        return create_sandbox(layout, mission_id, runtime, base=base, kind="harness", branch=branch)
    except UhError:
        run_git(["update-ref", "-d", f"refs/heads/{branch}", base], cwd=layout.root, timeout=30)
        raise


def fork_point(layout: Layout, branch: str) -> str | None:
    """Where ``branch`` left the main checkout's HEAD (its base, for a resumed mission)."""
    found = run_git(["merge-base", "HEAD", branch], cwd=layout.root, timeout=60)
    if found.returncode != 0:
        return None
    return found.stdout.decode().strip() or None


def attach_worktree(layout: Layout, mission_id: str, runtime: str, branch: str) -> SandboxEntry:
    """``--resume`` of a branch no sandbox holds any more: a new sandbox of its tip."""
    check_branch(branch)
    tip = resolve_commit(layout.root, branch)
    entry = create_sandbox(layout, mission_id, runtime, base=tip, kind="harness", branch=branch)
    base = fork_point(layout, branch) or tip
    with locked_index(layout) as index:
        found = index.find(entry.id)
        if found is not None:
            found.base_commit = base
            entry = found
    return entry


def delivered(layout: Layout, mission_id: str, branch: str) -> bool:
    """Whether ``branch`` already carries the harness's commit (the mission marked done)."""
    found = run_git(
        ["show", f"{branch}:.harness/missions/{mission_id}/mission.yaml"],
        cwd=layout.root,
        timeout=30,
    )
    if found.returncode != 0:
        return False
    try:
        data = parse_yaml(found.stdout.decode("utf-8", "replace")).data
    except Exception:
        return False
    return isinstance(data, dict) and data.get("status") == "done"


def set_sandbox_status(layout: Layout, sandbox_id: str, status: str) -> None:
    with locked_index(layout) as index:
        entry = index.find(sandbox_id)
        if entry is not None:
            entry.status = status


def _identity_env(root: Path) -> dict[str, str] | None:
    found = run_git(["var", "GIT_COMMITTER_IDENT"], cwd=root, timeout=30)
    return _FALLBACK_IDENTITY if found.returncode else None


def commit_judged(layout: Layout, mission_id: str, tree: str, branch: str, message: str) -> str:
    """The harness's one commit: exactly the judged ``tree``, with the mission's
    ``mission.yaml`` set to ``status: done``, on top of ``branch``'s tip, made in the
    operator's repository with ``commit-tree`` (no hook can run, nothing is re-read from
    the sandbox) and ``branch`` moved to it only if it has not moved meanwhile."""
    ref = f"refs/heads/{check_branch(branch)}"
    parent = resolve_commit(layout.root, ref)
    final_tree, _tracked = done_tree(layout.root, tree, mission_id)
    commit = git(
        layout.root, "commit-tree", final_tree, "-p", parent, "-m", message,
        env=_identity_env(layout.root),
    ).strip()  # fmt: skip
    git(layout.root, "update-ref", "-m", f"uh harness: {mission_id}", ref, commit, parent)
    return commit


def worktree_root(layout: Layout, entry: SandboxEntry) -> Path:
    return entry_path(layout, entry)


def current_branch(root: Path) -> str | None:
    """The branch checked out in the operator's checkout at ``root`` (None: detached)."""
    found = run_git(["symbolic-ref", "--quiet", "HEAD"], cwd=root, timeout=30)
    if found.returncode != 0:
        return None
    return found.stdout.decode("utf-8", "replace").strip().removeprefix("refs/heads/")
