"""Protected files (the mission, the spec, the features, the harness settings): which of those
the base commit tracks the agent modified, deleted or replaced (``write-scope``).

Judged in the object store, on exactly the tree that would be committed (``ctx.tree``, built
from the worktree as git stores it, filters applied), each file looked up with its mode. So
an edit the agent committed, staged or left in the working tree counts the same, a same-size
edit with its mtime put back is still seen, and a folder swapped for a symlink (to the
operator's own checkout, where the files still read unchanged) is the deletion it is. That
needs no sandbox, so the re-judge (promote, the Ray head) runs it on a commit.

The judged tree leaves the sandbox's ``.harness/`` out (uh's records: an agent's edit there
never lands). An edit of a protected file there is still an attempt on the judge, so the gate
also hashes those files in the sandbox, as git would store them, with the operator's git
directory (the sandbox's own ``.git`` — its filters, its replace refs — is never used).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from uh_core.diff.globs import compile_globs
from uh_core.errors import GitError
from uh_core.git import git, git_run
from uh_core.judge.context import GateContext
from uh_core.layout import HARNESS_DIR

_DIFF_LINES = 200  # per file, in the stage output
Change = tuple["Tracked", str, "str | None"]  # the file, how, its blob in the judged tree


@dataclass(frozen=True)
class Tracked:
    mode: str
    blob: str
    path: str


def _entries(ctx: GateContext, rev: str) -> dict[str, tuple[str, str, str]]:
    """path → (mode, kind, object id) of every entry of ``rev``'s tree (the object store)."""
    out = git(ctx.layout.root, "ls-tree", "-r", "-z", "--full-tree", rev)
    found: dict[str, tuple[str, str, str]] = {}
    for entry in out.split("\0"):
        if entry:
            meta, path = entry.split("\t", 1)
            mode, kind, oid = meta.split()
            found[path] = (mode, kind, oid)
    return found


def guarded(ctx: GateContext) -> list[Tracked]:
    """Files of the base commit under the protected globs and outside ``allow_paths``."""
    protected = compile_globs(tuple(ctx.settings.protected))
    allowed = compile_globs(tuple(ctx.settings.allow))
    return [
        Tracked(mode, blob, path)
        for path, (mode, kind, blob) in _entries(ctx, ctx.base_commit).items()
        if kind == "blob" and protected.match(path) and not allowed.match(path)
    ]


def _in_tree(ctx: GateContext, items: list[Tracked]) -> list[Change]:
    """(file, "deleted" | "modified" | "mode changed" | "replaced", its blob in the judged
    tree) for each touched one: read from the judged tree, exactly what would be committed,
    never the sandbox's files (a folder swapped for a symlink to the operator's checkout
    showed the protected files unchanged there, while the tree had lost them)."""
    if not items:
        return []
    judged = _entries(ctx, ctx.tree)
    touched: list[Change] = []
    for item in items:
        found = judged.get(item.path)
        if found is None or found[1] != "blob":  # gone, or under a link or a gitlink now
            touched.append((item, "deleted", None))
            continue
        mode, _, blob = found
        if (mode == "120000") != (item.mode == "120000"):
            touched.append((item, "replaced", blob))
        elif blob != item.blob:
            touched.append((item, "modified", blob))
        elif mode != item.mode:
            touched.append((item, "mode changed", blob))
    return touched


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _raw_blob_id(path: Path) -> str:
    try:
        return _blob_id(path.read_bytes())
    except OSError:
        return "unreadable"


def _hash_files(ctx: GateContext, paths: list[str]) -> dict[str, str]:
    if not paths:
        return {}
    stdin = "".join(f"{p}\n" for p in paths).encode("utf-8", "surrogateescape")
    done = git_run(
        ctx.worktree, "hash-object", "--stdin-paths",
        git_dir=ctx.git_dir, work_tree=ctx.worktree, stdin=stdin,
    )  # fmt: skip
    ids = done.stdout.decode().split()
    if done.returncode != 0 or len(ids) != len(paths):
        # One unreadable file: hash each raw (no filters); unreadable counts as modified.
        return {p: _raw_blob_id(ctx.worktree / p) for p in paths}
    return dict(zip(paths, ids, strict=True))


def _in_worktree(ctx: GateContext, items: list[Tracked]) -> list[tuple[Tracked, str]]:
    """(file, how) for each of ``items`` touched in the sandbox's own files: the ``.harness/``
    records the judged tree leaves out (an edit there never lands, but is still an attempt on
    the judge: the mission itself)."""
    touched: list[tuple[Tracked, str]] = []
    regular: list[Tracked] = []
    for item in items:
        path = ctx.worktree / item.path
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            touched.append((item, "deleted"))
            continue
        if item.mode == "120000":
            same = (
                stat.S_ISLNK(info.st_mode) and _blob_id(os.fsencode(os.readlink(path))) == item.blob
            )
            if not same:
                touched.append((item, "modified"))
        elif not stat.S_ISREG(info.st_mode):
            touched.append((item, "replaced"))
        else:
            executable = bool(info.st_mode & stat.S_IXUSR)
            if executable != (item.mode == "100755"):
                touched.append((item, "mode changed"))
            else:
                regular.append(item)
    hashed = _hash_files(ctx, [item.path for item in regular])
    touched += [(item, "modified") for item in regular if hashed[item.path] != item.blob]
    return touched


def diff_text(ctx: GateContext, item: Tracked, how: str, blob: str | None) -> str:
    """What changed in one protected file, for the next prompt: a unified diff of the judged
    blob (or, for a sandbox-only ``.harness/`` file, its file) against the base's."""
    if how != "modified" or item.mode == "120000":
        return f"{how}: {item.path}"
    try:
        before = git(ctx.layout.root, "cat-file", "blob", item.blob).splitlines(keepends=True)
        if blob is not None:
            after = git(ctx.layout.root, "cat-file", "blob", blob).splitlines(keepends=True)
        else:
            after = (ctx.worktree / item.path).read_text(encoding="utf-8").splitlines(True)
    except (GitError, OSError, UnicodeDecodeError):
        return f"modified (binary): {item.path}"
    lines = list(difflib.unified_diff(before, after, f"a/{item.path}", f"b/{item.path}", n=2))
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"… [{len(lines) - _DIFF_LINES} more diff lines]\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines).rstrip("\n")


def changes(ctx: GateContext, sandbox: bool = True) -> list[Change]:
    """(file, "deleted" | "modified" | "mode changed" | "replaced", its judged blob) for each
    protected file touched; ``sandbox``: the gate's, whose own ``.harness/`` is looked at too
    (a re-judge has only the commit)."""
    items = guarded(ctx)
    records = [i for i in items if i.path.startswith(f"{HARNESS_DIR}/")]
    # uh's records are not the judged tree's (the engine itself writes the mission's status
    # on its green commit): the sandbox's own are looked at instead, where there is one
    found = _in_tree(ctx, [i for i in items if not i.path.startswith(f"{HARNESS_DIR}/")])
    if sandbox:
        found += [(i, how, None) for i, how in _in_worktree(ctx, records)]
    return sorted(found, key=lambda change: change[0].path)
