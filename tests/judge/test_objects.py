"""The object store checked against its own names (``uh_core.judge.objects``): a loose object
rewritten in place reads as its new content under its old name, and is named."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from tests.conftest import Repo, git
from uh_core.judge.objects import unsound


def _rewrite(root: Path, oid: str, body: bytes) -> None:
    """What an unconfined agent did through ``objects/info/alternates``: the object's file
    holds other content (still a valid object, so git reads it without a word)."""
    path = root / ".git/objects" / oid[:2] / oid[2:]
    os.chmod(path, 0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(body) + body))


def test_a_rewritten_object_is_named_and_a_sound_store_has_none(repo: Repo) -> None:
    repo.write("checks/adds.sh", "python3 -c 'from calc import add; assert add(2, 3) == 5'\n")
    repo.commit("a check")
    head = git(repo.root, "rev-parse", "HEAD").strip()
    tree = git(repo.root, "rev-parse", "HEAD^{tree}").strip()
    assert unsound(repo.root, [head, tree]) == []
    blob = git(repo.root, "rev-parse", "HEAD:checks/adds.sh").strip()
    _rewrite(repo.root, blob, b"exit 0\n")
    assert git(repo.root, "cat-file", "blob", blob) == "exit 0\n"  # git itself reads it so
    assert unsound(repo.root, [head]) == [blob]
    assert unsound(repo.root, [tree]) == [blob]
