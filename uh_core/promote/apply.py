"""Git for a promotion: refuse first, then change the main checkout in one step.

Everything up to the last step writes only git objects: the candidate (the base with the
chosen paths taken from the source) is built in a temporary index, merged three-way onto
HEAD with ``git merge-tree`` (in memory: conflicts are named, nothing is written), and the
result committed with ``commit-tree``. Only then do the index and working tree move to the
new commit (``read-tree -m -u``, which refuses to overwrite anything) and the branch ref
follows, checked against the HEAD the merge was computed on. A refusal at any point leaves
the work tree, the index and HEAD exactly as they were. Hooks do not run: the commit is
exactly the tree that was judged.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from uh_core.errors import GitError, PromotionError, UsageError
from uh_core.git import git, is_repository, run_git
from uh_core.layout import HARNESS_DIR, Layout
from uh_core.proc import Captured

_FALLBACK_IDENTITY = {
    "GIT_AUTHOR_NAME": "uh promote",
    "GIT_AUTHOR_EMAIL": "promote@uh.invalid",
    "GIT_COMMITTER_NAME": "uh promote",
    "GIT_COMMITTER_EMAIL": "promote@uh.invalid",
}
_NO_HARNESS = (":(top)", f":(top,exclude){HARNESS_DIR}")


@dataclass(frozen=True)
class Head:
    commit: str
    tree: str
    branch: str  # short name, e.g. main


@dataclass(frozen=True)
class Entry:
    """One changed path of the source: its new mode and blob, or a deletion."""

    path: str
    mode: str
    blob: str
    deleted: bool


def _run(
    root: Path, args: list[str], stdin: bytes | None = None, env: dict[str, str] | None = None
) -> Captured:
    return run_git([*args], cwd=root, timeout=600, stdin=stdin, env=env)


def _check(root: Path, args: list[str], found: Captured) -> str:
    if found.timed_out or found.returncode != 0:
        lines = found.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {' '.join(args[:2])} failed in {root}: {lines[-1] if lines else ''}")
    return found.stdout.decode("utf-8", "surrogateescape")


def identity(root: Path) -> dict[str, str] | None:
    """Your git identity; a fallback only where git has none."""
    found = run_git(["var", "GIT_COMMITTER_IDENT"], cwd=root, timeout=30)
    return None if found.returncode == 0 else _FALLBACK_IDENTITY


def current_head(layout: Layout) -> Head:
    root = layout.root
    if not is_repository(root):
        raise UsageError(f"{root} is not a git repository: promotion commits onto a branch")
    top = Path(git(root, "rev-parse", "--show-toplevel").strip()).resolve()
    if top != root.resolve():
        raise UsageError(
            f"{root} is not the top level of its git repository ({top})",
            fix="pass --root at the repository's top level",
        )
    ref = run_git(["symbolic-ref", "--quiet", "HEAD"], cwd=root, timeout=30)
    if ref.returncode != 0:
        raise PromotionError(
            "HEAD is detached: a promotion is one commit on the current branch",
            fix="switch to the branch to promote onto (git switch main)",
        )
    head = run_git(["rev-parse", "--verify", "--quiet", "HEAD"], cwd=root, timeout=30)
    if head.returncode != 0:
        raise PromotionError("the current branch has no commit yet", fix="commit something first")
    commit = head.stdout.decode().strip()
    tree = git(root, "rev-parse", f"{commit}^{{tree}}").strip()
    return Head(commit, tree, ref.stdout.decode().strip().removeprefix("refs/heads/"))


def dirty_paths(layout: Layout) -> list[str]:
    """Changed, staged or untracked paths of the main checkout. Ignored files do not count,
    nor untracked files under ``.harness/`` (the harness's own state)."""
    args = ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none"]
    out = _check(layout.root, args, _run(layout.root, args))
    found: list[str] = []
    records = iter(out.split("\0"))
    for record in records:
        if len(record) < 4:
            continue
        code, path = record[:2], record[3:]
        if code[0] in "RC":
            next(records, None)  # the rename's source follows as its own record
        if code == "??" and path.startswith(f"{HARNESS_DIR}/"):
            continue
        found.append(path)
    return found


def require_clean(layout: Layout) -> None:
    dirty = dirty_paths(layout)
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise PromotionError(
            f"the main checkout has uncommitted changes: {shown}",
            fix="commit or stash them; a promotion is one commit on a clean tree",
        )


def changed_entries(root: Path, base: str, tree: str, exclude_harness: bool) -> list[Entry]:
    """What ``tree`` changes against ``base``, path by path (renames as delete + add)."""
    args = ["diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", base, tree]
    if exclude_harness:
        args += ["--", *_NO_HARNESS]
    fields = _check(root, args, _run(root, args)).split("\0")
    entries: list[Entry] = []
    for header, path in zip(fields[0::2], fields[1::2], strict=False):
        if not header.startswith(":"):
            continue
        _old_mode, new_mode, _old, new_blob, status = header[1:].split(" ")
        entries.append(Entry(path, new_mode, new_blob, status.startswith("D")))
    return sorted(entries, key=lambda e: e.path)


def candidate(root: Path, base: str, entries: list[Entry], message: str) -> str:
    """A commit on ``base`` whose tree is the base with ``entries`` applied (objects only)."""
    zero = "0" * 40
    lines = [
        f"0 {zero}\t{e.path}" if e.deleted else f"{e.mode} {e.blob}\t{e.path}" for e in entries
    ]
    with tempfile.TemporaryDirectory(prefix="uh-promote-") as scratch:
        env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        _check(root, ["read-tree"], _run(root, ["read-tree", base], env=env))
        data = "".join(f"{line}\0" for line in lines).encode("utf-8", "surrogateescape")
        args = ["update-index", "-z", "--index-info"]
        _check(root, args, _run(root, args, stdin=data, env=env))
        tree = _check(root, ["write-tree"], _run(root, ["write-tree"], env=env)).strip()
    args = ["commit-tree", tree, "-p", base, "-F", "-"]
    return _check(root, args, _run(root, args, message.encode(), identity(root))).strip()


def merge_onto(root: Path, head: Head, commit: str, label: str) -> str:
    """The tree of ``commit`` merged three-way onto HEAD, or a refusal naming each conflict."""
    args = ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", head.commit, commit]
    found = _run(root, args)
    if found.returncode not in (0, 1) or found.timed_out:
        _check(root, args, found)
    fields = [f for f in found.stdout.decode("utf-8", "surrogateescape").split("\0") if f]
    if found.returncode == 1:
        conflicts = sorted(set(fields[1:]))
        raise PromotionError(
            f"{label} does not apply cleanly onto {head.branch}: conflicts in "
            + ", ".join(conflicts),
            fix="resolve them in the source (or promote the other paths with --change)",
        )
    return fields[0]


def make_commit(root: Path, head: Head, tree: str, message: str) -> str:
    """The promotion's commit object on top of HEAD (an object only: nothing moves)."""
    args = ["commit-tree", tree, "-p", head.commit, "-F", "-"]
    return _check(root, args, _run(root, args, message.encode(), identity(root))).strip()


def move_branch(root: Path, head: Head, commit: str, message: str) -> None:
    """The one step that lands a promotion: HEAD's branch from its commit to ``commit``."""
    reason = f"uh-core promote: {message.splitlines()[0]}"
    moved = _run(root, ["update-ref", "-m", reason, "HEAD", commit, head.commit])
    if moved.returncode != 0:
        raise PromotionError(
            f"{head.branch} moved while promoting; nothing was committed", fix="retry"
        )
