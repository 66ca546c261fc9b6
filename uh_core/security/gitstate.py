"""The git side of a tamper snapshot: where the git dirs are, refs, status and the index.

Every call goes through ``proc.run_capture`` with ``-c core.fsmonitor=false`` (no helper
process is started, nothing is trusted from it), in the engine's clean git environment
(``uh_core.git.safe_env``: no variable that would point git at another repository, index or
configuration; global and system configuration off, and the attribute and ignore files
outside the repository too; ``GIT_NO_REPLACE_OBJECTS=1``) plus ``GIT_OPTIONAL_LOCKS=0``
(``status`` does not refresh and rewrite the index) and ``LC_ALL=C``. So ``status`` runs no
clean filter from ``~/.gitconfig``. Not through ``uh_core.git.git_run``: its
``core.hooksPath=/dev/null`` would hide where the real hooks are.

One exception: ``locate`` asks where the hooks are with the operator's own configuration
(``uh_core.git.operator_env``), since a ``core.hooksPath`` in ``~/.gitconfig`` names the
hooks the operator's git runs. ``rev-parse`` only reads values; it runs nothing.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from uh_core.errors import GitError
from uh_core.git import operator_env, safe_env, trusted_config
from uh_core.proc import Captured, run_capture

GIT_TIMEOUT_S = 120.0
_ENV = {"GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
_BROKEN = {
    "warning: ignoring broken ref ": "broken",
    "warning: ignoring ref with broken name ": "broken-name",
}
STATUS_ARGS = (
    "-c", "core.untrackedCache=false",
    "-c", "core.checkStat=default",  # every stat field, not only mtime and size
    "-c", "core.ignoreStat=false",
    "status",
    "--porcelain=v2",
    "-z",
    "--untracked-files=all",
    "--ignore-submodules=none",
    "--no-renames",
)  # fmt: skip


_OUTSIDE_FILES = ("-c", "core.attributesFile=/dev/null", "-c", "core.excludesFile=/dev/null")


def run_git(root: Path, *args: str, operator: bool = False) -> Captured:
    """``git args`` in ``root``; a GitError naming the command if it fails or times out.
    ``operator``: with the operator's configuration (reads of values only)."""
    outside = () if operator else _OUTSIDE_FILES
    argv = ["git", "-c", "core.fsmonitor=false", *outside, *trusted_config(), *args]
    env = {**operator_env(), **_ENV} if operator else safe_env(_ENV)
    result = run_capture(argv, cwd=root, env=env, env_is_complete=True, timeout=GIT_TIMEOUT_S)
    shown = " ".join(args)
    if result.timed_out:
        raise GitError(f"git {shown} timed out after {GIT_TIMEOUT_S:.0f} s in {root}")
    if result.returncode != 0:
        lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = lines[-1] if lines else f"exit {result.returncode}"
        raise GitError(f"git {shown} failed in {root}: {reason}")
    return result


@dataclass(frozen=True)
class Located:
    """Where a work tree's git state lives (every path absolute)."""

    git_dir: Path  # this work tree's own git dir (``.git/worktrees/<name>`` when linked)
    common_dir: Path  # the shared one (refs, objects, config, hooks)
    hooks_dir: Path  # ``core.hooksPath`` when set, else ``<common dir>/hooks``
    toplevel: Path


def locate(root: Path) -> Located:
    out = run_git(
        root, "rev-parse", "--absolute-git-dir", "--git-common-dir", "--git-path", "hooks",
        "--show-toplevel", operator=True,
    )  # fmt: skip
    lines = os.fsdecode(out.stdout).splitlines()
    if len(lines) != 4:
        raise GitError(f"git rev-parse gave {len(lines)} lines, not 4, in {root}")
    git_dir, common, hooks, top = (Path(os.path.normpath(root / line)) for line in lines)
    return Located(git_dir, common, hooks, top)


def list_refs(root: Path) -> dict[str, str]:
    """Every ref (packed or loose, replace refs included) → its object id, and
    ``symref:<target>`` after it for a symbolic ref; a ref git ignores as broken → ``broken``."""
    out = run_git(root, "for-each-ref", "--format=%(objectname) %(refname) %(symref)")
    refs: dict[str, str] = {}
    for line in os.fsdecode(out.stdout).splitlines():
        oid, name, target = [*line.split(" ", 2), "", ""][:3]
        refs[name] = f"{oid} symref:{target}" if target else oid
    for line in os.fsdecode(out.stderr).splitlines():
        for prefix, value in _BROKEN.items():
            if line.startswith(prefix):
                refs[line[len(prefix) :].strip()] = value
    return refs


def read_status(root: Path) -> dict[str, str]:
    """``git status`` by path (relative to the top level) → its record without the path.

    Porcelain v2 records: ``1 XY sub mH mI mW hH hI path``, ``2 … path<NUL>orig`` (not made:
    renames are off), ``u XY sub m1 m2 m3 mW h1 h2 h3 path``, ``? path``, ``! path``.
    """
    fields = os.fsdecode(run_git(root, *STATUS_ARGS).stdout).split("\0")
    records: dict[str, str] = {}
    at = 0
    while at < len(fields):
        record = fields[at]
        at += 1
        if not record or record.startswith("#"):
            continue
        head, path = _split(record, {"1": 8, "2": 9, "u": 10}.get(record[0], 1))
        records[path] = head
        if record[0] == "2" and at < len(fields):
            records[fields[at]] = f"{head} (renamed to {path})"
            at += 1
    return records


def _split(record: str, count: int) -> tuple[str, str]:
    """The record's first ``count`` fields, and the path after them (it may hold spaces)."""
    parts = record.split(" ", count)
    return " ".join(parts[:count]), parts[count] if len(parts) > count else ""


def read_index(root: Path) -> tuple[str, dict[str, str]]:
    """sha256 of ``git ls-files -s -v -z`` (what is staged: tags, modes, object ids, stages
    and paths, none of the stat data git refreshes in the index file itself), and the paths
    whose tag hides them from ``git status`` (``S`` skip-worktree, lowercase for
    assume-unchanged) → that tag, so their content can be compared directly."""
    out = run_git(root, "ls-files", "-s", "-v", "-z").stdout
    hidden: dict[str, str] = {}
    if out.count(b"\0H ") + out.startswith(b"H ") == out.count(b"\0"):
        return hashlib.sha256(out).hexdigest(), hidden  # every entry plain (the usual case)
    for record in out.split(b"\0"):
        if record and record[:2] != b"H ":
            tag, _, rest = record.partition(b" ")
            hidden[os.fsdecode(rest.partition(b"\t")[2])] = os.fsdecode(tag)
    return hashlib.sha256(out).hexdigest(), hidden
