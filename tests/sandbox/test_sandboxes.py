"""Sandboxes: git worktrees from a recorded base, unique ids, an index changed under a lock."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
import yaml

from tests.conftest import Repo, git
from tests.runtime.helpers import add_manifest
from uh_core.errors import SandboxError
from uh_core.layout import Layout
from uh_core.sandbox.index import read_index
from uh_core.sandbox.worktree import create_sandbox, discard_sandbox


def test_create_records_base_and_checks_out_a_worktree(repo: Repo) -> None:
    head = git(repo.root, "rev-parse", "HEAD").strip()
    entry = create_sandbox(Layout(repo.root), "m", "script")
    assert entry.id.startswith("sbx-m-script-") and entry.base_commit == head
    assert entry.status == "active"
    worktree = repo.root / entry.worktree
    assert (worktree / "README.md").exists()
    assert git(worktree, "rev-parse", "HEAD").strip() == head
    # A repository of its own, outside the operator's work tree, borrowing its objects.
    assert not worktree.is_relative_to(repo.root) and (worktree / ".git").is_dir()
    alternates = (worktree / ".git/objects/info/alternates").read_text().strip()
    assert Path(alternates) == (repo.root / ".git/objects").resolve()
    assert not list((worktree / ".git").glob("hooks/*"))
    assert str(worktree) not in git(repo.root, "worktree", "list")
    assert git(repo.root, "status", "--porcelain") == ""


def test_ids_are_unique_within_one_second(repo: Repo) -> None:
    layout = Layout(repo.root)
    ids = [create_sandbox(layout, "m", "r").id for _ in range(3)]
    assert len(set(ids)) == 3


def test_a_discarded_sandboxs_id_is_never_taken_again(
    repo: Repo, frozen_time: Callable[[str], None]
) -> None:
    """Made, discarded and made again in the same second (a resumed harness run after
    `sandbox discard`): the new sandbox has an id of its own, so a ledger naming the old one
    never names the new one."""
    frozen_time("2026-11-29T12:00:00.000Z")
    layout = Layout(repo.root)
    first = create_sandbox(layout, "m", "r").id
    discard_sandbox(layout, first)
    again = create_sandbox(layout, "m", "r").id
    assert again != first and again.startswith(first)


def _create(root: str) -> str:
    return create_sandbox(Layout(Path(root)), "m", "r").id


def test_concurrent_creation_keeps_the_index_consistent(repo: Repo) -> None:
    with ProcessPoolExecutor(max_workers=6) as pool:
        ids = list(pool.map(_create, [str(repo.root)] * 6))
    assert len(set(ids)) == 6
    index = read_index(Layout(repo.root))
    assert sorted(s.id for s in index.sandboxes) == sorted(ids)
    assert all(s.status == "active" for s in index.sandboxes)


def test_two_mission_runs_at_once(repo: Repo) -> None:
    repo.mission("m", "id: m\n")
    add_manifest(
        repo, "slowfix", "runtime_kind: script\nconfig:\n  script: sleep 1; echo x > x.txt\n"
    )
    repo.commit("setup")
    runs = [repo.start("mission", "run", "m", "--runtime", "slowfix", "--json") for _ in range(2)]
    results = [json.loads(run.communicate(timeout=60)[0]) for run in runs]
    assert all(r["status"] == "succeeded" for r in results), results
    sandboxes = {r["sandbox"] for r in results}
    assert len(sandboxes) == 2
    index = yaml.safe_load((repo.root / ".harness/sandboxes/index.yaml").read_text())
    assert {s["id"] for s in index["sandboxes"]} == sandboxes
    listed = repo.uh("sandbox", "list", "--json")
    assert {s["id"] for s in json.loads(listed.stdout)["sandboxes"]} == sandboxes


def test_discard_removes_worktree_and_entry(repo: Repo) -> None:
    layout = Layout(repo.root)
    keep = create_sandbox(layout, "m", "a")
    gone = create_sandbox(layout, "m", "b")
    (repo.root / gone.worktree / "scratch.txt").write_text("uncommitted work")
    result = repo.uh("sandbox", "discard", gone.id)
    assert result.code == 0 and gone.id in result.stdout
    assert not (repo.root / gone.worktree).exists()
    assert [s.id for s in read_index(layout).sandboxes] == [keep.id]
    assert str(repo.root / gone.worktree) not in git(repo.root, "worktree", "list")
    again = repo.uh("sandbox", "discard", gone.id)
    assert again.code == 2 and "unknown sandbox" in again.stderr
    assert repo.uh("sandbox", "discard", "../etc").code == 2


def test_discard_several_by_id_by_mission_or_all(repo: Repo) -> None:
    layout = Layout(repo.root)
    a1, a2 = create_sandbox(layout, "a", "x"), create_sandbox(layout, "a", "y")
    b1, b2, b3 = (create_sandbox(layout, "b", r) for r in ("x", "y", "z"))
    # Named ones are all checked before any is discarded: an unknown id discards nothing.
    refused = repo.uh("sandbox", "discard", b1.id, "sbx-nope")
    assert refused.code == 2 and "unknown sandbox 'sbx-nope'" in refused.stderr
    assert len(read_index(layout).sandboxes) == 5
    two = json.loads(repo.uh("sandbox", "discard", b1.id, b2.id, "--json").stdout)
    assert [d["discarded"] for d in two["discarded"]] == [b1.id, b2.id] and two["in_use"] == []
    mission = repo.uh("sandbox", "discard", "--mission", "a")
    assert mission.code == 0 and a1.id in mission.stdout and a2.id in mission.stdout
    assert [s.id for s in read_index(layout).sandboxes] == [b3.id]
    everything = repo.uh("sandbox", "discard", "--all")
    assert everything.code == 0 and b3.id in everything.stdout
    assert read_index(layout).sandboxes == []
    assert repo.uh("sandbox", "discard", "--all").stdout == "no sandboxes to discard\n"
    for wrong in ([], [b3.id, "--all"]):
        said = repo.uh("sandbox", "discard", *wrong)
        assert said.code == 2 and "ID…, --mission ID or --all" in said.stderr, said.stderr


def test_discard_survives_a_worktree_deleted_by_hand(repo: Repo) -> None:
    layout = Layout(repo.root)
    entry = create_sandbox(layout, "m", "a")
    shutil.rmtree(repo.root / entry.worktree)
    discard_sandbox(layout, entry.id)
    assert read_index(layout).sandboxes == []


def test_not_a_git_repository(tmp_path: Path) -> None:
    from uh_core.init import init_project

    init_project(Layout(tmp_path))
    with pytest.raises(SandboxError, match="not a git repository"):
        create_sandbox(Layout(tmp_path), "m", "r")


def test_bad_base_is_refused_and_leaves_nothing(repo: Repo) -> None:
    layout = Layout(repo.root)
    with pytest.raises(Exception, match="not a commit"):
        create_sandbox(layout, "m", "r", base="no-such-rev")
    assert read_index(layout).sandboxes == []


def test_compat_adapters_load(repo: Repo, compat: Path) -> None:
    for manifest in (compat / "harness/adapters").glob("*.yaml"):
        shutil.copy(manifest, repo.root / ".harness/adapters" / manifest.name)
    listed = repo.uh("adapter", "list", "--json")
    assert listed.code == 0, listed.stderr
    rows = {r["id"]: r for r in json.loads(listed.stdout)["adapters"]}
    for adapter_id in (
        "codex",
        "hermes",
        "hermes-proxy",
        "oh-my-pi",
        "pi",
        "openrouter",
        "anthropic",
    ):
        assert rows[adapter_id]["error"] is None, rows[adapter_id]
    assert rows["openrouter"]["supported"] is False and rows["codex"]["supported"] is True
    assert rows["anthropic"]["status"] == "experimental"
    check = repo.uh("adapter", "check", "openrouter")
    assert check.code == 1 and "no adapter" in check.stdout
