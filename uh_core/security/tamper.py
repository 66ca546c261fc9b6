"""Did a run reach out of its sandbox? Snapshot the operator's repository before, compare after.

``snapshot_repo`` records everything in the operator's repository that an agent running as
the same user could change to alter what git does or what the harness decides: HEAD, every
ref, the hooks, the files in the git dir that change git's behaviour (plus any entry there
that git does not usually keep), the work tree's status with the content of every path it
lists (and of every path it cannot see: skip-worktree, assume-unchanged), what is staged,
and every file under ``.harness/``; and the operator's git configuration outside the
repository (``~/.gitconfig``, ``$XDG_CONFIG_HOME/git/``, the system files: ``outside.py``),
which the operator's own git would obey. ``compare`` names each difference as a
``TamperChange``; any difference means the run is ``tampered``. Nothing is repaired.

``.ndjson`` event logs may be appended to by other uh processes while the run goes on. A
snapshot records each file's size and the sha256 of all its bytes; ``compare`` treats a log
that grew as unchanged when, read again now (from ``after.root``), its first ``after.size``
bytes still hash to the after snapshot's sha256 and its first ``before.size`` bytes hash to
the before snapshot's — one pass, nothing past ``after.size`` read. Anything else (shorter,
rewritten, a different mode, or changed again since the after snapshot) is a change.

``skip(rel)`` is asked about every ``.harness/`` path (directories too: a skipped directory is
not descended) and every work-tree path git status lists, relative to the root in posix form.
Work-tree paths under ``.harness/`` are compared as ``harness-file`` only (not twice).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from uh_core.layout import HARNESS_DIR
from uh_core.security.change import TamperChange
from uh_core.security.files import (
    ABSENT,
    DIR,
    error_text,
    fingerprint,
    parse_file,
    prefixes_match,
    read_small,
    walk,
)
from uh_core.security.gitstate import Located, list_refs, locate, read_index, read_status
from uh_core.security.outside import KIND as OUTSIDE
from uh_core.security.outside import snapshot_outside

# Entries of a git dir that git itself keeps and changes, or that are compared another way.
USUAL = frozenset(
    {
        "HEAD", "config", "description", "index", "packed-refs", "ORIG_HEAD", "FETCH_HEAD",
        "COMMIT_EDITMSG", "logs", "refs", "objects", "hooks", "info", "worktrees", "modules",
        "branches", "gc.pid", "gc.log", "config.worktree", "commondir", "shallow",
    }
)  # fmt: skip
CONFIG_FILES = ("config", "config.worktree")
COMMON_FILES = (
    "info/attributes", "info/exclude", "info/sparse-checkout", "info/grafts",
    "objects/info/alternates", "commondir", "shallow",
)  # fmt: skip
LINKED_FILES = ("info/sparse-checkout", "commondir")  # a linked work tree's own git dir
Skip = Callable[[str], bool]


@dataclass(frozen=True)
class RepoSnapshot:
    """The state ``compare`` judges. Values are fingerprints (``uh_core.security.files``)
    unless said otherwise; names are relative to ``root`` (posix), or absolute outside it."""

    root: Path
    git_dir: Path  # this work tree's own git dir
    common_dir: Path
    hooks_dir: Path
    head: str  # "<symbolic ref or 'detached'> <commit, or 'unborn'>"
    refs: dict[str, str]  # ref → object id (+ " symref:<target>"), or "broken"
    hooks: dict[str, str]  # name within hooks_dir → fingerprint
    config: dict[str, str]  # config files → fingerprint ("absent" included)
    git_files: dict[str, str]  # other git files, and unusual git-dir entries → fingerprint
    worktree: dict[str, str]  # path git status lists → "<status record> | <fingerprint>"
    index: str  # sha256 of `git ls-files -s -v -z`
    harness: dict[str, str]  # every .harness/ path not skipped → fingerprint
    outside: dict[str, str]  # the operator's git configuration outside it → fingerprint


def snapshot_repo(root: Path, *, skip: Skip | None = None) -> RepoSnapshot:
    """The repository at ``root`` (its top level) as ``compare`` needs it. GitError if git
    fails. The git commands run side by side while the files are read."""
    root = Path(os.path.realpath(root))
    with ThreadPoolExecutor(max_workers=4) as pool:
        status_job = pool.submit(read_status, root)  # the longest: first
        index_job = pool.submit(read_index, root)
        located = pool.submit(locate, root)
        refs_job = pool.submit(list_refs, root)
        harness = _harness(root, skip)
        outside = snapshot_outside()
        where = located.result()
        hooks = _tree(where.hooks_dir)
        config, git_files = _git_files(root, where)
        refs, status, (index, hidden) = refs_job.result(), status_job.result(), index_job.result()
    head_text = read_small(where.git_dir / "HEAD")
    return RepoSnapshot(
        root=root,
        git_dir=where.git_dir,
        common_dir=where.common_dir,
        hooks_dir=where.hooks_dir,
        head=_head(head_text, refs, where.git_dir / "HEAD"),
        refs=refs,
        hooks=hooks,
        config=config,
        git_files=git_files,
        worktree=_worktree(root, where.toplevel, {**_flagged(hidden), **status}, skip),
        index=index,
        harness=harness,
        outside=outside,
    )


def _display(root: Path, path: Path) -> str:
    rel = os.path.relpath(path, root)
    outside = rel == os.pardir or rel.startswith(os.pardir + os.sep)
    return str(path) if outside else Path(rel).as_posix()


def _tree(base: Path) -> dict[str, str]:
    top = fingerprint(base)
    if top == DIR:
        return walk(base, "")
    return {} if top == ABSENT else {".": top}  # the folder itself is a link or a file


def _harness(root: Path, skip: Skip | None) -> dict[str, str]:
    if skip is not None and skip(HARNESS_DIR):
        return {}
    top = fingerprint(root / HARNESS_DIR)
    if top == DIR:
        return walk(root / HARNESS_DIR, HARNESS_DIR, skip)
    return {} if top == ABSENT else {HARNESS_DIR: top}


def _git_files(root: Path, where: Located) -> tuple[dict[str, str], dict[str, str]]:
    linked = where.git_dir != where.common_dir
    dirs = [where.common_dir, where.git_dir] if linked else [where.common_dir]
    config: dict[str, str] = {}
    other: dict[str, str] = {}
    for folder in dirs:
        for name in CONFIG_FILES:
            config[_display(root, folder / name)] = fingerprint(folder / name)
        names = LINKED_FILES if folder != where.common_dir else COMMON_FILES
        for name in names:
            other[_display(root, folder / name)] = fingerprint(folder / name)
        try:
            with os.scandir(folder) as listing:
                unusual = [entry.name for entry in listing if entry.name not in USUAL]
        except OSError as exc:
            other[_display(root, folder)] = error_text(exc)
            continue
        for name in unusual:
            other[_display(root, folder / name)] = fingerprint(folder / name)
    other[_display(root, where.toplevel / ".git")] = fingerprint(where.toplevel / ".git")
    return config, other


def _head(text: str | None, refs: Mapping[str, str], path: Path) -> str:
    if text is None:
        return f"unreadable {fingerprint(path)}"
    text = text.strip()
    if not text.startswith("ref:"):
        return f"detached {text or 'empty'}"
    target = text[4:].strip()
    value = refs.get(target)
    return f"{target} {value.split(' ')[0] if value else 'unborn'}"


def _flagged(hidden: Mapping[str, str]) -> dict[str, str]:
    """Paths git status does not look at (skip-worktree, assume-unchanged), as records."""
    return {path: f"{tag} (hidden from status)" for path, tag in hidden.items()}


def _worktree(
    root: Path, top: Path, status: Mapping[str, str], skip: Skip | None
) -> dict[str, str]:
    entries: dict[str, str] = {}
    for path, record in status.items():
        full = top / path
        name = _display(root, full)
        if name == HARNESS_DIR or name.startswith(HARNESS_DIR + "/"):
            continue  # compared file by file as harness-file
        if skip is not None and skip(name):
            continue
        entries[name] = f"{record} | {fingerprint(full)}"
    return entries


def compare(before: RepoSnapshot, after: RepoSnapshot) -> list[TamperChange]:
    """Every difference from ``before`` to ``after``, in a stable order (empty: untouched)."""
    changes: list[TamperChange] = []
    if before.head != after.head and not _ref_says_it(before, after):
        changes.append(TamperChange("head", "HEAD", before.head, after.head))
    changes += _diff("ref", before.refs, after.refs)
    changes += _diff("hook", before.hooks, after.hooks)
    changes += _diff("config", before.config, after.config)
    changes += _diff(OUTSIDE, before.outside, after.outside)
    changes += _diff("git-file", before.git_files, after.git_files)
    changes += _diff("worktree", before.worktree, after.worktree)
    if before.index != after.index:
        index = _display(after.root, after.git_dir / "index")
        changes.append(TamperChange("index", index, before.index, after.index))
    for change in _diff("harness-file", before.harness, after.harness):
        if not _appended(after.root, change):
            changes.append(change)
    return changes


def _diff(kind: str, before: Mapping[str, str], after: Mapping[str, str]) -> list[TamperChange]:
    changes: list[TamperChange] = []
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name, ABSENT), after.get(name, ABSENT)
        if old != new:
            changes.append(TamperChange(kind, name, _none(old), _none(new)))
    return changes


def _none(value: str) -> str | None:
    return None if value == ABSENT else value


def _ref_says_it(before: RepoSnapshot, after: RepoSnapshot) -> bool:
    """HEAD stayed on the same branch and only that branch moved: the ref change says it."""
    ref_b, ref_a = before.head.split(" ")[0], after.head.split(" ")[0]
    if ref_b != ref_a or not ref_b.startswith("refs/"):
        return False
    return before.refs.get(ref_b) != after.refs.get(ref_a)


def _appended(root: Path, change: TamperChange) -> bool:
    """An event log that only grew (see the module doc)."""
    if not change.name.endswith(".ndjson"):
        return False
    old, new = parse_file(change.before), parse_file(change.after)
    if old is None or new is None or old.perm != new.perm or new.size <= old.size:
        return False
    return prefixes_match(root / change.name, old, new)
