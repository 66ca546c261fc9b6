"""``mission run-all --executor ray`` against a real two-node cluster on loopback."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Repo
from tests.runtime.helpers import add_manifest
from uh_core.distributed.localcluster import LocalCluster
from uh_core.events.reader import read_events

FIX = "runtime_kind: script\nstatus: active\nconfig:\n  script: printf 'fixed\\n' > a.txt\n"
OTHER = "runtime_kind: script\nstatus: active\nconfig:\n  script: printf 'other\\n' > a.txt\n"


def _setup(repo: Repo) -> None:
    repo.write("a.txt", "a\n")
    repo.mission("m", "id: m\nacceptance_criteria:\n  - id: x\n    check_command: 'true'\n")
    for adapter_id in ("aider", "claude", "codex", "hermes", "oh-my-pi", "pi"):
        (repo.root / f".harness/adapters/{adapter_id}.yaml").unlink(missing_ok=True)
    for name, body in (("one", FIX), ("two", FIX), ("only", OTHER), ("none", FIX)):
        add_manifest(repo, name, body)
    repo.commit("setup")


def _run_all(repo: Repo, *extra: str) -> tuple[int, dict, str]:
    result = repo.uh("mission", "run-all", "m", "--json", *extra, timeout=300)
    assert result.stdout.strip(), f"exit {result.code}, no JSON; stderr: {result.stderr}"
    return result.code, json.loads(result.stdout), result.stderr


def _shape(data: dict) -> dict:
    return {
        "status": data["status"],
        "groups": data["groups"],
        "agreement": data["agreement_runtimes"],
        "divergent": data["divergent_runtimes"],
        "failed": data["failed_runtimes"],
        "rows": [(r["runtime"], r["status"], r["diff_hash"], r["touched_paths"])
                 for r in data["runtimes"]],
    }  # fmt: skip


def test_run_all_on_ray_agrees_with_local_and_places_by_capability(
    repo: Repo, cluster: LocalCluster
) -> None:
    _setup(repo)
    ray = ("--executor", "ray", "--ray-address", cluster.address)
    code, local, err = _run_all(repo, "--runtimes", "one,two,only")
    assert code == 1, err  # only diverges
    code, remote, err = _run_all(repo, "--runtimes", "one,two,only", *ray)
    assert code == 1, err
    assert _shape(remote) == _shape(local)
    assert remote["status"] == "divergent" and remote["agreement_runtimes"] == ["one", "two"]
    # Each landed in the head's own sandbox, as a local run leaves it: verify can read it.
    only = next(r for r in remote["runtimes"] if r["runtime"] == "only")
    tree = repo.uh("sandbox", "list", "--json")
    sandboxes = {s["id"]: s for s in json.loads(tree.stdout)["sandboxes"]}
    assert only["sandbox"] in sandboxes
    landed = sandboxes[only["sandbox"]]["worktree"]
    assert (Path(landed) / "a.txt").read_text() == "other\n"
    # Events streamed back, each tagged with its node: "only" ran on the worker node only.
    ids = cluster.node_ids()
    events, _ = read_events(repo.root / ".harness/missions/m/events.ndjson")
    started = {
        e.runtime: getattr(e, "node", None)
        for e in events
        if e.event == "runtime.started" and e.run_id and getattr(e, "node", None)
    }
    assert ids["worker1"][:8] in started["only"], started
    # A runtime no node advertises is blocked at once, saying so.
    code, blocked, err = _run_all(repo, "--runtimes", "one,none", *ray)
    assert code == 1, err
    row = next(r for r in blocked["runtimes"] if r["runtime"] == "none")
    assert row["status"] == "blocked"
    assert "no node of the Ray cluster advertises runtime none" in row["error"]
    assert next(r for r in blocked["runtimes"] if r["runtime"] == "one")["status"] == "succeeded"


def test_no_cluster_is_a_clear_refusal(repo: Repo) -> None:
    _setup(repo)
    result = repo.uh("mission", "run-all", "m", "--executor", "ray", "--runtimes", "one")
    assert result.code == 2
    assert "--executor ray needs a cluster: no --ray-address and no RAY_ADDRESS" in result.stderr
