"""``uh-core diff capture``: the working tree against a base commit, as one appliable patch.

What is captured: tracked changes (staged or not), deletions, and new untracked files that
are not ignored, against ``base`` (default ``HEAD``), with renames detected and binary files
as git binary patches — never the root's own ``.harness/`` state. The user's index is never
touched: git stages everything into a temporary copy of it (``GIT_INDEX_FILE``) and diffs
that copy against the base.

Content, not timestamps: the copy's own timestamp is set to 1970, which makes every entry
"racily clean" to git, so ``git add`` re-reads every tracked file instead of trusting the
stat data (a same-size edit whose mtime was put back is still seen). The fsmonitor and the
untracked cache are off for the same reason, and assume-unchanged bits are cleared in the
copy. The patch streams straight from git into a temporary file next to the target, which
is then renamed over it; ``git apply`` on a checkout of the base reproduces the working tree.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from uh_core.diff.patch_paths import scan_file
from uh_core.errors import GitError, NotFoundError, UsageError
from uh_core.fileio import file_mode
from uh_core.git import git_run
from uh_core.layout import HARNESS_DIR, Layout
from uh_core.proc import Captured

GIT_TIMEOUT_S = 600.0

# Settings that would make the patch unappliable or depend on who runs it.
_GIT_CONFIG = (
    "-c", "core.safecrlf=false",
    "-c", "advice.addEmbeddedRepo=false",
    "-c", "diff.noprefix=false",
    "-c", "diff.mnemonicPrefix=false",
    "-c", "diff.relative=false",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "core.splitIndex=false",
    "-c", "core.ignoreStat=false",
)  # fmt: skip
_EPOCH_PLUS_ONE_NS = 1_000_000_000  # an index timestamp of 0 would turn the racy check off
_DIFF_FLAGS = (
    "--cached",
    "--binary",
    "-M",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--submodule=short",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


@dataclass(frozen=True)
class CaptureResult:
    files: int  # file sections in the patch (a rename counts once)
    bytes: int
    base_commit: str  # full id of the base commit (the empty tree's id on an unborn branch)


@dataclass(frozen=True)
class Where:
    """A work tree and the git directory that judges it: its own (``git_dir`` None), or for
    a sandbox the operator's, so the agent's ``.git`` (config, hooks, filters) is never
    used and every object written lands in the operator's store."""

    work_tree: Path
    git_dir: Path | None = None


def _git(
    root: Path | Where,
    args: list[str],
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
) -> Captured:
    where = root if isinstance(root, Where) else Where(root)
    work_tree = where.work_tree if where.git_dir is not None else None
    result = git_run(
        where.work_tree,
        *_GIT_CONFIG,
        *args,
        git_dir=where.git_dir,
        work_tree=work_tree,
        env=env,
        stdin=stdin,
        timeout=GIT_TIMEOUT_S,
    )
    if result.timed_out:
        raise GitError(f"git {args[0]} timed out after {GIT_TIMEOUT_S:.0f}s in {where.work_tree}")
    return result


def _fail(args: list[str], result: Captured, root: Path | Where) -> GitError:
    root = root.work_tree if isinstance(root, Where) else root
    lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
    detail = lines[-1] if lines else f"exit code {result.returncode}"
    return GitError(f"git {' '.join(args[:2])} failed in {root}: {detail}")


def _text(root: Path | Where, args: list[str]) -> str:
    result = _git(root, args)
    if result.returncode != 0:
        raise _fail(args, result, root)
    return result.stdout.decode("utf-8", "surrogateescape").strip()


def resolve_base(root: Path | Where, base: str) -> str:
    """Full id of ``base`` as a commit; on an unborn ``HEAD``, the empty tree's id."""
    if not base or base.startswith("-"):
        raise UsageError(f"--base {base!r}: not a revision")
    found = _git(root, ["rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"])
    if found.returncode == 0:
        return found.stdout.decode().strip()
    if base == "HEAD" and _git(root, ["rev-parse", "--verify", "--quiet", "HEAD"]).returncode:
        return _text(root, ["hash-object", "-t", "tree", "/dev/null"])
    raise GitError(
        f"--base {base!r}: not a commit in the repository at {root}",
        fix="give a branch, tag or commit id (git rev-parse must resolve it)",
    )


def _pathspecs(root: Path, top: Path) -> list[str]:
    rel = root.relative_to(top).as_posix() if root != top else ""
    harness = f"{rel}/{HARNESS_DIR}" if rel else HARNESS_DIR
    return [":(top)", f":(top,exclude){harness}"]


def _clear_assume_unchanged(root: Path, env: dict[str, str]) -> None:
    """Clear assume-unchanged bits in the temporary index, so git looks at those files."""
    listed = _git(root, ["ls-files", "-v", "-z"], env)
    if listed.returncode != 0:
        raise _fail(["ls-files", "-v"], listed, root)
    hidden = [entry[2:] for entry in listed.stdout.split(b"\0") if entry[:1].islower()]
    if hidden:
        args = ["update-index", "--no-assume-unchanged", "-z", "--stdin"]
        done = _git(root, args, env, stdin=b"\0".join(hidden) + b"\0")
        if done.returncode != 0:
            raise _fail(args, done, root)


def _top(root: Path) -> Path:
    probe = _git(root, ["rev-parse", "--show-toplevel"])
    if probe.returncode != 0:
        raise GitError(
            f"{root} is not inside a git repository",
            fix="run from a git checkout or pass --root",
        )
    return Path(probe.stdout.decode("utf-8", "surrogateescape").strip()).resolve()


@contextmanager
def _staged(
    root: Path | Where, specs: list[str], base: str | None = None
) -> Iterator[dict[str, str]]:
    """The environment of a temporary copy of ``root``'s index with the working tree under
    ``specs`` staged into it by content (the user's index is never touched). A sandbox
    judged with the operator's git directory starts from ``base`` instead (no stat data:
    every file is hashed), so what ``specs`` leaves out is as the base has it."""
    with tempfile.TemporaryDirectory(prefix="uh-diff-") as scratch:
        index = Path(scratch) / "index"
        env = {"GIT_INDEX_FILE": str(index)}
        if isinstance(root, Where) and root.git_dir is not None:
            if base is not None:
                done = _git(root, ["read-tree", base], env)
                if done.returncode != 0:
                    raise _fail(["read-tree", base], done, root)
            added = _git(root, ["add", "-A", "--", *specs], env)
            if added.returncode != 0:
                raise _fail(["add", "-A"], added, root)
            yield env
            return
        work = root.work_tree if isinstance(root, Where) else root
        real_index = Path(_text(root, ["rev-parse", "--git-path", "index"]))
        if not real_index.is_absolute():
            real_index = work / real_index
        if real_index.is_file():
            shutil.copyfile(real_index, index)
            os.utime(index, ns=(_EPOCH_PLUS_ONE_NS, _EPOCH_PLUS_ONE_NS))
            _clear_assume_unchanged(work, env)
        add = ["add", "-A", "--", *specs]
        added = _git(root, add, env)
        if added.returncode != 0:
            raise _fail(add, added, root)
        yield env


def _write_patch(
    root: Path | Where,
    env: dict[str, str] | None,
    base_commit: str,
    specs: list[str],
    out_path: Path,
) -> CaptureResult:
    """Stream the staged copy's diff against ``base_commit`` into ``out_path`` (replaced whole)."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out_path.name}.", suffix=".tmp", dir=out_path.parent)
    os.fchmod(fd, file_mode())
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        diff = ["diff", *_DIFF_FLAGS, f"--output={tmp}", base_commit, "--", *specs]
        done = _git(root, diff, env)
        if done.returncode != 0:
            raise _fail(diff, done, root)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        summary = scan_file(tmp)
        size = tmp.stat().st_size
        os.replace(tmp, out_path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return CaptureResult(files=summary.files, bytes=size, base_commit=base_commit)


def _where(root: Path, git_dir: Path | None) -> tuple[Where, list[str]]:
    root = root.resolve()
    if git_dir is not None:
        return Where(root, git_dir), [":(top)", f":(top,exclude){HARNESS_DIR}"]
    return Where(root), _pathspecs(root, _top(root))


def capture_diff(
    root: Path, out_path: Path, base: str = "HEAD", *, git_dir: Path | None = None
) -> CaptureResult:
    """Write the patch of ``root``'s working tree against ``base`` to ``out_path``
    (``git_dir``: judge a sandbox with the operator's git directory)."""
    where, specs = _where(root, git_dir)
    base_commit = resolve_base(where, base)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with _staged(where, specs, base_commit) as env:
        return _write_patch(where, env, base_commit, specs, out_path)


def file_hash(path: Path) -> str:
    """``diff_hash``: the first 16 hex digits of the sha256 of a file's bytes (contract §6)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Snapshot:
    """A working tree as git objects: what promotion applies and what verify judged."""

    tree: str  # the working tree as a tree object (``.harness/`` as the worktree's HEAD has it)
    base_commit: str
    diff_hash: str  # the hash of exactly the patch ``capture_diff`` writes against the base


def snapshot_worktree(
    root: Path, base: str, *, git_dir: Path | None = None, patch_out: Path | None = None
) -> Snapshot:
    """The working tree of ``root`` (untracked files included, ignored ones and ``.harness/``
    changes left out) written as a tree object, with the hash of its patch against ``base``
    (also written to ``patch_out`` when given). Only objects are written: the checkout, its
    index and its refs are untouched. With ``git_dir`` (a sandbox judged by the operator's
    git directory) the objects land in the operator's store, ready for ``commit-tree``."""
    where, specs = _where(root, git_dir)
    base_commit = resolve_base(where, base)
    with (
        _staged(where, specs, base_commit) as env,
        tempfile.TemporaryDirectory(prefix="uh-snap-") as scratch,
    ):
        tree = _git(where, ["write-tree"], env)
        if tree.returncode != 0:
            raise _fail(["write-tree"], tree, where)
        patch = patch_out if patch_out is not None else Path(scratch) / "diff.patch"
        patch.parent.mkdir(parents=True, exist_ok=True)
        _write_patch(where, env, base_commit, specs, patch)
        digest = file_hash(patch)
    return Snapshot(tree.stdout.decode().strip(), base_commit, digest)


def commits_patch(
    root: Path, base: str, rev: str, patch: Path, *, git_dir: Path | None = None
) -> None:
    """Write the patch from ``base`` to ``rev`` (commits or trees) as a capture writes it."""
    flags = [flag for flag in _DIFF_FLAGS if flag != "--cached"]
    args = ["diff", *flags, f"--output={patch}", base, rev, "--"]
    done = _git(Where(root, git_dir), args)
    if done.returncode != 0:
        raise _fail(args, done, root)


def commits_diff_hash(root: Path, base: str, rev: str, *, git_dir: Path | None = None) -> str:
    """The hash of the patch from ``base`` to ``rev`` (commits or trees), as a capture writes it."""
    with tempfile.TemporaryDirectory(prefix="uh-diff-") as scratch:
        patch = Path(scratch) / "diff.patch"
        commits_patch(root, base, rev, patch, git_dir=git_dir)
        return file_hash(patch)


def capture_mission_diff(
    layout: Layout, mission_id: str, base: str = "HEAD"
) -> tuple[Path, CaptureResult]:
    """Capture into the mission's ``diff.patch`` and record a ``diff.captured`` event."""
    from uh_core.events.writer import EventLog
    from uh_core.models.events import DiffCaptured

    mission_file = layout.mission_file(mission_id)
    if not mission_file.is_file():
        raise NotFoundError(
            f"mission {mission_id!r} not found: {layout.rel(mission_file)} does not exist",
            fix="check the id with 'uh-core mission list'",
        )
    out = layout.diff_file(mission_id)
    result = capture_diff(layout.root, out, base)
    EventLog(layout.mission_events(mission_id), mission_id=mission_id).emit(
        DiffCaptured(
            path=layout.rel(out), base=result.base_commit, files=result.files, bytes=result.bytes
        )
    )
    return out, result
