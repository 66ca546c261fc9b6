"""What a worker sends is checked against its ids (``uh_core.jobs.objects``), without a
cluster: the attack is an object planted in the worker's store under the id of a file the
agent honestly wrote, holding other content (git does not re-hash what it reads)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import zlib
from pathlib import Path

import pytest

from tests.conftest import Repo, git
from uh_core.jobs.harness_job import holds_judged
from uh_core.jobs.objects import Tampered, TreeCheck, planted, receive
from uh_core.jobs.source import bundle_branch
from uh_core.layout import Layout

HONEST = "def add(a, b):\n    return a + b\n"
PLANTED = "def add(a, b):\n    import os; os.system('id')  # planted\n    return a + b\n"


def _plant(store: Path, oid: str, content: bytes) -> None:
    """A loose object named ``oid`` holding ``content`` (as an agent writes one)."""
    folder = store / oid[:2]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / oid[2:]).write_bytes(zlib.compress(b"blob %d\0" % len(content) + content))


def _worker(repo: Repo, name: str, plant: bool) -> tuple[Path, str, str, str]:
    """A worker's clone with one commit on the base changing ``README.md`` and adding
    ``src/calc.py``; (clone, base, commit, tree)."""
    base = git(repo.root, "rev-parse", "HEAD").strip()
    worker = repo.root.parent / name
    git(repo.root.parent, "clone", "-q", str(repo.root), str(worker))
    git(worker, "checkout", "-q", "-b", "harness/calc", base)
    (worker / "src").mkdir()
    (worker / "src/calc.py").write_text(HONEST)
    (worker / "README.md").write_text((worker / "README.md").read_text() * 40 + "more\n")
    if plant:
        oid = hashlib.sha1(b"blob %d\0" % len(HONEST) + HONEST.encode()).hexdigest()
        _plant(worker / ".git/objects", oid, PLANTED.encode())
    git(worker, "add", "-A")
    git(worker, "-c", "user.name=w", "-c", "user.email=w@x", "commit", "-q", "-m", "work")
    commit = git(worker, "rev-parse", "HEAD").strip()
    return worker, base, commit, git(worker, "rev-parse", "HEAD^{tree}").strip()


def _holds(tree: str) -> TreeCheck:
    return holds_judged("calc", tree, "HEAD")


def _store(root: Path) -> set[str]:
    found = set()
    for folder, _dirs, files in os.walk(root / ".git/objects"):
        found |= {os.path.join(folder, name) for name in files}
    return found


def test_a_planted_object_is_found_on_the_worker_and_refused_on_the_head(repo: Repo) -> None:
    worker, base, commit, tree = _worker(repo, "worker-planted", plant=True)
    # git itself reads the planted content under the honest id: nothing warns
    assert git(worker, "show", f"{commit}:src/calc.py") == PLANTED
    [line] = planted(worker, commit, base)
    assert "blob" in line and "holds content whose id is" in line
    bundle = bundle_branch(Layout(worker), "harness/calc", base)
    before = _store(repo.root)
    with pytest.raises(Tampered, match="not what its id says, or is missing"):
        receive(repo.root, bundle, "refs/heads/harness/calc", commit, base, _holds(tree))
    assert _store(repo.root) == before  # nothing landed, no quarantine left behind
    absent = subprocess.run(["git", "cat-file", "-e", commit], cwd=repo.root, check=False)
    assert absent.returncode != 0


def test_an_honest_result_lands_whole(repo: Repo) -> None:
    worker, base, commit, tree = _worker(repo, "worker-honest", plant=False)
    assert planted(worker, commit, base) == []
    bundle = bundle_branch(Layout(worker), "harness/calc", base)
    with pytest.raises(Tampered, match="the gate judged"):  # another tree than was judged
        receive(repo.root, bundle, "refs/heads/harness/calc", commit, base, _holds(base))
    landed = receive(repo.root, bundle, "refs/heads/harness/calc", commit, base, _holds(tree))
    assert landed == commit
    assert git(repo.root, "show", f"{commit}:src/calc.py") == HONEST
    git(repo.root, "rev-list", "--objects", "--missing=error", commit)
    assert not [p for p in (repo.root / ".git/objects").iterdir() if "incoming" in p.name]


def test_a_bundle_that_is_not_one_is_refused(repo: Repo) -> None:
    base = git(repo.root, "rev-parse", "HEAD").strip()
    with pytest.raises(Tampered, match="not a git bundle"):
        receive(repo.root, b"PACK\0\0\0\2", "refs/heads/harness/calc", base, base, _holds(base))
