"""Objects a worker sends, checked against their ids before any of them lands.

Git does not re-hash what it reads: a loose object is trusted to hold what its name says.
An agent that can write the worker's object store (its sandbox borrows it through
``objects/info/alternates``; unconfined, it can write there) can plant, under the id of a
file it honestly wrote, other content. ``git add`` then finds the id present and writes
nothing, so the judged tree names the honest content while the store — and the bundle made
from it — hold the planted one.

Two checks, one on each side:

- the worker (``planted``) re-hashes every object its commit adds to the base, from the
  content its store returns, before it bundles anything: a mismatch ends the mission
  ``tampered``, naming the object;
- the head (``receive``) never trusts the worker: the bundle's pack is indexed with
  ``git index-pack --strict --fsck-objects`` (every id computed from its content, every link
  resolved, every object well-formed) into a quarantine directory of its own, the commit's
  whole closure must be readable (``rev-list --objects --missing=error``), the commit must be
  the one the record names, one commit on the base, its tree the tree the gate judged (the
  caller's ``check``). Only then do the packs move into the operator's store. Anything else
  raises ``Tampered``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from uh_core.errors import ExecutorError
from uh_core.git import common_dir, git, git_run

_HEADERS = (b"# v2 git bundle\n", b"# v3 git bundle\n")
# The caller's own look at the received commit, before it lands: (root, git env that sees
# the quarantine, commit) → None when it holds what was judged, else why not.
TreeCheck = Callable[[Path, dict[str, str], str], str | None]


class Tampered(ExecutorError):
    """What a worker sent is not what it says (the reason names the object or the check)."""


def _bundle_parts(data: bytes) -> tuple[list[str], dict[str, str], bytes]:
    """(prerequisites, ref → id, pack) of a git bundle; anything else is refused."""
    header = next((h for h in _HEADERS if data.startswith(h)), None)
    end = data.find(b"\n\n")
    if header is None or end < 0:
        raise Tampered("the result bundle is not a git bundle (v2 or v3)")
    prerequisites: list[str] = []
    refs: dict[str, str] = {}
    for raw in data[len(header) : end].split(b"\n"):
        line = raw.decode("ascii", "replace")
        if line.startswith("@"):
            continue  # v3 capabilities (object-format, filter)
        if line.startswith("-"):
            prerequisites.append(line[1:].split(" ", 1)[0])
        else:
            oid, _, ref = line.partition(" ")
            refs[ref] = oid
    return prerequisites, refs, data[end + 2 :]


def receive(root: Path, bundle: bytes, ref: str, commit: str, base: str, check: TreeCheck) -> str:
    """The bundle's objects into ``root``'s store once every check passed (``check`` last:
    the tree is the one the gate judged); ``commit``. Raises ``Tampered`` (nothing written
    to the store) otherwise."""
    prerequisites, refs, pack = _bundle_parts(bundle)
    if set(prerequisites) - {base}:
        raise Tampered(f"the result bundle needs commits other than the base: {prerequisites}")
    if refs.get(ref) != commit or len(refs) != 1:
        raise Tampered(f"the result bundle holds {refs}, the record says {ref} is {commit}")
    objects = common_dir(root) / "objects"
    quarantine = Path(tempfile.mkdtemp(prefix="uh-incoming-", dir=objects))
    try:
        (quarantine / "pack").mkdir()
        env = {"GIT_OBJECT_DIRECTORY": str(quarantine),
               "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects)}  # fmt: skip
        indexed = git_run(
            root, "index-pack", "--stdin", "--fix-thin", "--strict", "--fsck-objects",
            env=env, stdin=pack, timeout=600,
        )  # fmt: skip
        if indexed.returncode != 0:
            said = indexed.stderr.decode("utf-8", "replace").strip().splitlines()
            raise Tampered(
                "an object from the worker is not what its id says, or is missing: "
                + (said[-1] if said else f"git index-pack exit {indexed.returncode}")
            )
        _check_commit(root, env, commit, base)
        refused = check(root, env, commit)
        if refused is not None:
            raise Tampered(refused)
        _adopt(quarantine / "pack", objects / "pack")
    finally:
        shutil.rmtree(quarantine, ignore_errors=True)
    return commit


def _check_commit(root: Path, env: dict[str, str], commit: str, base: str) -> None:
    closure = git_run(root, "rev-list", "--objects", "--missing=error", commit, env=env)
    if closure.returncode != 0:
        said = closure.stderr.decode("utf-8", "replace").strip().splitlines()
        raise Tampered(f"the commit {commit[:12]} cannot be read whole: {said[-1] if said else ''}")
    parents = git(root, "rev-list", "--parents", "-n", "1", commit, env=env).split()[1:]
    if parents != [base]:
        raise Tampered(f"the worker's commit {commit[:12]} is not one commit on the base")


def _adopt(incoming: Path, pack_dir: Path) -> None:
    """The checked packs into the store: each ``.idx`` last, so no reader sees an index
    before its pack."""
    pack_dir.mkdir(parents=True, exist_ok=True)
    names = sorted(os.listdir(incoming), key=lambda name: name.endswith(".idx"))
    for name in names:
        if name.startswith("pack-"):
            os.replace(incoming / name, pack_dir / name)


def planted(root: Path, commit: str, base: str) -> list[str]:
    """Objects ``commit`` adds to ``base`` whose stored content does not hash to their id
    (one line each); empty when every one is what it says. Read from ``root``'s store as
    the bundle would read them."""
    listed = git(root, "rev-list", "--objects", commit, f"^{base}").split("\n")
    ids = [line.split(" ", 1)[0] for line in listed if line.strip()]
    if not ids:
        return []
    out = git_run(root, "cat-file", "--batch", stdin=("\n".join(ids) + "\n").encode(), timeout=600)
    if out.returncode != 0:
        return [f"the objects of {commit[:12]} cannot be read back (git cat-file failed)"]
    data, at, wrong = out.stdout, 0, []
    for oid in ids:
        end = data.index(b"\n", at)
        found, kind, size = data[at:end].decode("ascii", "replace").split(" ")
        content = data[end + 1 : end + 1 + int(size)]
        at = end + 2 + int(size)
        digest = hashlib.new("sha1" if len(oid) == 40 else "sha256")
        digest.update(f"{kind} {len(content)}\0".encode() + content)
        if found != oid or digest.hexdigest() != oid:
            wrong.append(f"object {oid} ({kind}) holds content whose id is {digest.hexdigest()}")
    return wrong
