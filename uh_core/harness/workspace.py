"""Git around the loop: the clean-tree check, ``harness/<id>`` branches and their worktrees,
and the one commit the harness makes (the work plus ``status: done``, on the branch only).

The main checkout is only read (status, HEAD) and given branches and worktrees; its files,
index and HEAD are never changed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from uh_core.errors import HarnessError, UhError
from uh_core.fileio import dump_yaml, write_text_atomic
from uh_core.git import git, is_repository, resolve_commit
from uh_core.layout import Layout
from uh_core.models.sandbox import SandboxEntry
from uh_core.proc import run_capture
from uh_core.sandbox.index import locked_index
from uh_core.sandbox.worktree import (
    check_branch,
    create_sandbox,
    discard_sandbox,
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
        raise HarnessError(f"{root} is not a git repository: the harness works on branches")
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
    found = run_capture(
        ["git", "check-ignore", "--no-index", "--stdin"],
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
    found = run_capture(
        ["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], cwd=root, timeout=30
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
    branch = check_branch(f"harness/{mission_id}")
    return create_sandbox(layout, mission_id, runtime, base=base, kind="harness", branch=branch)


def fork_point(layout: Layout, branch: str) -> str | None:
    """Where ``branch`` left the main checkout's HEAD (its base, for a resumed mission)."""
    found = run_capture(["git", "merge-base", "HEAD", branch], cwd=layout.root, timeout=60)
    if found.returncode != 0:
        return None
    return found.stdout.decode().strip() or None


def attach_worktree(layout: Layout, mission_id: str, runtime: str, branch: str) -> SandboxEntry:
    """``--resume`` of a branch no worktree holds any more: a new sandbox with it checked out."""
    check_branch(branch)
    tip = resolve_commit(layout.root, branch)
    entry = create_sandbox(layout, mission_id, runtime, base=tip, kind="harness")
    git(worktree_root(layout, entry), "switch", "--quiet", branch)
    base = fork_point(layout, branch) or tip
    with locked_index(layout) as index:
        found = index.find(entry.id)
        if found is not None:
            found.branch, found.base_commit = branch, base
            entry = found
    return entry


def delivered(layout: Layout, mission_id: str, branch: str) -> bool:
    """Whether ``branch`` already carries the harness's commit (the mission marked done)."""
    found = run_capture(
        ["git", "show", f"{branch}:.harness/missions/{mission_id}/mission.yaml"],
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


def current_branch(worktree: Path) -> str | None:
    found = run_capture(["git", "symbolic-ref", "--quiet", "HEAD"], cwd=worktree, timeout=30)
    if found.returncode != 0:
        return None
    return found.stdout.decode("utf-8", "replace").strip().removeprefix("refs/heads/")


def contains_commit(worktree: Path, commit: str) -> bool:
    found = run_capture(
        ["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=worktree, timeout=60
    )
    return found.returncode == 0


_STATUS_LINE = re.compile(
    r"^(?P<key>status[ \t]*:[ \t]*)(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^#\s][^#\n]*?)?"
    r"(?P<rest>[ \t]+#[^\n]*)?[ \t]*$"
)


def done_text(text: str) -> str:
    """``text`` of a mission.yaml with ``status: done``: one line changed (comments and
    layout kept) when that is provably the same document; else the document re-dumped."""
    doc = parse_yaml(text)
    if not isinstance(doc.data, dict):
        raise HarnessError("mission.yaml is not a mapping")
    wanted = {**doc.data, "status": "done"}
    position = doc.positions.get(("status",))
    lines = text.splitlines(keepends=True)
    if position is not None and position.column == 1:
        index = position.line - 1
        ending = "\n" if lines[index].endswith("\n") else ""
        matched = _STATUS_LINE.match(lines[index].rstrip("\r\n"))
        if matched:
            lines[index] = f"{matched['key']}done{matched['rest'] or ''}{ending}"
        candidate = "".join(lines)
    elif position is None:
        candidate = text + ("" if not text or text.endswith("\n") else "\n") + "status: done\n"
    else:
        candidate = ""
    try:
        if candidate and parse_yaml(candidate).data == wanted:
            return candidate
    except Exception:  # any doubt: re-dump below
        pass
    return dump_yaml(wanted)


def mark_done(mission_file: Path) -> None:
    write_text_atomic(mission_file, done_text(mission_file.read_text(encoding="utf-8")))


def commit_work(worktree: Path, message: str, exclude: str | None = None) -> str:
    """Commit everything in the worktree (ignored files aside) on its branch; the commit id.

    The index is rebuilt from HEAD first, so every file is hashed again: what is committed
    is what the gate judged by content, whatever the files' timestamps or index flags say.
    ``exclude`` names a mission whose generated evidence (runs/, events, verification,
    diff) stays out even where the project's .gitignore does not cover it.
    """
    env = None
    if run_capture(["git", "var", "GIT_COMMITTER_IDENT"], cwd=worktree, timeout=30).returncode:
        env = _FALLBACK_IDENTITY
    git(worktree, "read-tree", "HEAD")
    git(worktree, "add", "-A")
    if exclude is not None:
        mission_dir = f".harness/missions/{exclude}"
        generated = ("runs", "events.ndjson", "verification.yaml", "diff.patch")
        git(worktree, "reset", "-q", "--", *(f"{mission_dir}/{name}" for name in generated))
    git(worktree, "commit", "--no-verify", "--allow-empty", "-q", "-m", message, env=env)
    return git(worktree, "rev-parse", "HEAD").strip()


def worktree_root(layout: Layout, entry: SandboxEntry) -> Path:
    path = layout.root / entry.worktree
    return Path(os.path.normpath(path))
