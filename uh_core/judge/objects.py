"""The object store the judge reads, checked against its own names.

Git names every object by the hash of its content, but reading one does not check that: a
loose object overwritten in place reads as its new content under its old name. An agent that
runs unconfined can reach the operator's store (a sandbox borrows it through
``objects/info/alternates``) and rewrite the stored copy of a check script or a test file;
the base commit and the judged tree then name the same objects as before, so no comparison
of ids sees the change, and every room checks the planted content out.

So before write-scope compares anything, every object of the base commit and of the judged
tree — the commit, its trees, their blobs — is read back and hashed; one whose content does
not hash to its name stops the gate (``git fsck`` names it too). A confined agent cannot
write the store (bubblewrap binds it read-only), so the gate reads it back after an
unconfined attempt; the re-judge (promote, the Ray head) always does, over the commit it is
about to land (one pass over two trees: 0.19 s for uh's own 900 objects).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from uh_core.errors import GitError
from uh_core.git import git, git_run

BATCH_BYTES = 32 << 20  # content read per ``cat-file --batch`` call (memory bound)


def _listing(root: Path, rev: str) -> list[tuple[str, str, int]]:
    """(type, id, size) of ``rev`` itself (when a commit), its tree and everything in it."""
    kind = git(root, "cat-file", "-t", rev).strip()
    tree = git(root, "rev-parse", "--verify", f"{rev}^{{tree}}").strip()
    out: list[tuple[str, str, int]] = []
    if kind == "commit":
        out.append(("commit", git(root, "rev-parse", "--verify", f"{rev}^{{commit}}").strip(), 0))
    out.append(("tree", tree, 0))
    for entry in git(root, "ls-tree", "-r", "-t", "-l", "-z", tree).split("\0"):
        if not entry:
            continue
        meta = entry.split("\t", 1)[0].split()
        if meta[1] in ("blob", "tree"):
            out.append((meta[1], meta[2], int(meta[3]) if meta[3].isdigit() else 0))
    return out


def _read_back(root: Path, ids: list[str]) -> list[str]:
    """The ids among ``ids`` whose content does not hash to them."""
    done = git_run(root, "cat-file", "--batch", stdin="".join(f"{i}\n" for i in ids).encode())
    if done.returncode != 0 or done.timed_out:
        raise GitError(f"git cat-file --batch failed in {root}")
    data, at, bad = done.stdout, 0, []
    for oid in ids:
        end = data.index(b"\n", at)
        header = data[at:end].split()
        if len(header) != 3:  # "<id> missing"
            bad.append(oid)
            at = end + 1
            continue
        kind, size = header[1], int(header[2])
        body = data[end + 1 : end + 1 + size]
        at = end + 2 + size  # the content, then a newline
        digest = hashlib.sha1(kind + b" %d\0" % size + body, usedforsecurity=False).hexdigest()
        if digest != oid:
            bad.append(oid)
    return bad


def unsound(root: Path, revs: list[str]) -> list[str]:
    """Objects of ``revs`` (commits or trees) whose content is not what their names say."""
    wanted: dict[str, int] = {}
    for rev in revs:  # never remembered: an unconfined agent may write between two attempts
        for _, oid, size in _listing(root, rev):
            wanted.setdefault(oid, size)
    bad: list[str] = []
    batch: list[str] = []
    held = 0
    for oid, size in wanted.items():
        if batch and held + size > BATCH_BYTES:
            bad += _read_back(root, batch)
            batch, held = [], 0
        batch.append(oid)
        held += size
    if batch:
        bad += _read_back(root, batch)
    return bad
