"""``harness run --executor ray`` against a real cluster on loopback: the same outcomes and
branches as a local run, a node killed mid-job, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import git
from tests.harness.conftest import Project
from tests.runtime.helpers import add_manifest, live_processes_with
from uh_core.distributed.cluster import SLOTS, runtime_resource
from uh_core.distributed.localcluster import LocalCluster

GOOD_AGENT = 'write("src/calc.py", GOOD)\nprint("```uh-runtime-final-message\\nfixed add\\n```")\n'
SECOND = """\
id: second
title: A note
objective: write notes/second.txt
status: pending
acceptance_criteria:
  - id: note
    description: the note exists
    check_command: test -f notes/second.txt
expected_outputs:
  files: [notes/second.txt]
"""
# Each mission branches from the base, where the suite is red until add is fixed: the
# second mission's agent fixes it too, with a test of its own (the TDD gate).
BOTH_AGENT = """\
write("src/calc.py", GOOD)
if "notes/second.txt" in prompt:
    write("notes/second.txt", "second\\n")
    write("tests/test_second.py", "def test_note():\\n    assert True\\n")
"""


def _branch_files(project: Project, branch: str) -> dict[str, str]:
    base = git(project.root, "merge-base", "HEAD", branch).strip()
    names = git(project.root, "diff", "--name-only", base, branch).split()
    return {name: project.show(branch, name) for name in names}


def test_harness_on_ray_matches_local(project: Project, cluster: LocalCluster) -> None:
    project.repo.mission("second", SECOND)
    project.repo.commit("second")
    agent = project.agent("both", BOTH_AGENT)
    before = project.snapshot()
    local = project.run("--agent", agent, "--jobs", "2", "--format", "json")
    assert local.code == 0, local.stderr
    local_ledger = json.loads(local.stdout)
    local_files = {b: _branch_files(project, b) for b in ("harness/calc", "harness/second")}
    ray = project.run(
        "--agent", agent, "--jobs", "2", "--force", "--format", "json",
        "--executor", "ray", "--ray-address", cluster.address,
    )  # fmt: skip
    assert ray.code == 0, ray.stderr
    ray_ledger = json.loads(ray.stdout)
    assert project.snapshot() == before  # the main checkout untouched either way

    def shape(ledger: dict) -> list[tuple]:
        return [
            (r["mission_id"], r["outcome"], r["branch"], len(r["attempts"]),
             [s["stage"] for s in r["attempts"][-1]["stages"]])
            for r in ledger["requirements"]
        ]  # fmt: skip

    assert shape(ray_ledger) == shape(local_ledger)
    assert ray_ledger["settings"]["executor"] == "ray"
    assert {b: _branch_files(project, b) for b in local_files} == local_files
    for record in ray_ledger["requirements"]:
        assert record["node"] and "node " in record["node"]
        commit = git(project.root, "rev-parse", record["branch"]).strip()
        assert record["commit"] == commit
    # What the head keeps is what a local run keeps: the sandbox and its evidence.
    sandboxes = json.loads(project.repo.uh("sandbox", "list", "--json").stdout)["sandboxes"]
    landed = {s["id"]: s for s in sandboxes}
    calc = ray_ledger["requirements"][0]
    assert landed[calc["sandbox_id"]]["status"] == "passed"
    evidence = project.root / ".harness/sandboxes" / calc["sandbox_id"] / "missions/calc/runs"
    assert list(evidence.rglob("diff.patch")), "the attempt's evidence landed"
    assert (
        (Path(landed[calc["sandbox_id"]]["worktree"]) / "src/calc.py")
        .read_text()
        .endswith("return a + b\n")
    )
    # The worker's events streamed into the operator's log, each naming its node.
    events = project.events(".harness/missions/calc/events.ndjson")
    remote = [e for e in events if e.get("run_id") == ray_ledger["run_id"]]
    kinds = {e["event"] for e in remote}
    assert {"harness.attempt.started", "harness.gate.checked", "runtime.started"} <= kinds
    assert all(e.get("node") == calc["node"] for e in remote), remote
    # promote takes a branch that passed on a worker as it takes a local one.
    promoted = project.repo.uh(
        "promote", "calc", "--approved-by", "test", "--branch", "harness/calc"
    )
    assert promoted.code == 0, promoted.stderr


def test_a_node_killed_mid_job_is_an_error_naming_it(
    project: Project, cluster: LocalCluster, tmp_path: Path
) -> None:
    marker = project.agents / "doomed.started"
    add_manifest(
        project.repo, "doomed",
        f"runtime_kind: script\nstatus: active\nconfig:\n  script: touch {marker}; sleep 307\n",
    )  # fmt: skip
    project.repo.commit("doomed runtime")
    node = cluster.add_worker("doomed", {runtime_resource("doomed"): SLOTS})
    run = project.repo.start(
        "harness", "run", "--runtime", "doomed", "--format", "json",
        "--executor", "ray", "--ray-address", cluster.address,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not marker.exists():
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the agent never started"
            time.sleep(0.1)
        ids = cluster.node_ids()
        cluster.kill(node.name)  # the machine is gone: its processes with it
        for pid in live_processes_with("sleep 307"):
            os.kill(pid, signal.SIGKILL)
        out, err = run.communicate(timeout=180)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1 and out.strip(), (out, err)
    ledger = json.loads(out)
    [record] = ledger["requirements"]
    assert record["outcome"] == "error", (
        record["node"],
        record["reason"],
        record["attempts"][-1]["agent"],
        err[-3000:],
    )
    assert ids["doomed"][:8] in record["reason"] and "ended without a result" in record["reason"]
    assert ledger["status"] == "completed" and ledger["totals"]["errors"] == 1
    # Nothing of the job landed: no branch, no sandbox; the next run starts clean.
    assert "harness/calc" not in git(project.root, "branch", "--list", "harness/calc")
    assert json.loads(project.repo.uh("sandbox", "list", "--json").stdout)["sandboxes"] == []


def test_ctrl_c_cancels_the_remote_job(project: Project, cluster: LocalCluster) -> None:
    started = project.agents / "slow.started"
    agent = project.agent(
        "slow", f'pathlib.Path({str(started)!r}).write_text("x")\nimport time\ntime.sleep(311)\n'
    )
    run = project.repo.start(
        "harness", "run", "--agent", agent, "--format", "json",
        "--executor", "ray", "--ray-address", cluster.address,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not started.exists():
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the agent never started"
            time.sleep(0.1)
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 130, err
    ledger = json.loads(out)
    assert ledger["status"] == "interrupted"
    [record] = ledger["requirements"]
    assert record["attempts"][-1]["outcome"] == "interrupted", record
    assert record["node"]
    deadline = time.monotonic() + 30
    while live_processes_with(str(project.agents / "slow.py")):
        assert time.monotonic() < deadline, "the remote agent outlived the cancel"
        time.sleep(0.2)


def test_a_mission_no_node_can_run_is_blocked_with_its_promises_listed(
    project: Project, cluster: LocalCluster
) -> None:
    """A mission that never leaves the head begins as a local one does: its record lists
    what nothing checks (an unverified promise), and no branch is claimed."""
    mission = project.root / ".harness/missions/calc/mission.yaml"
    mission.write_text(
        mission.read_text().replace(
            "tests:\n", "  - id: reviewed\n    description: read by a maintainer\ntests:\n"
        )
    )
    add_manifest(
        project.repo, "nowhere", "runtime_kind: script\nstatus: active\nconfig:\n  script: 'true'\n"
    )
    project.repo.commit("a runtime no node advertises, a criterion nothing checks")
    result = project.run(
        "--runtime", "nowhere", "--format", "json",
        "--executor", "ray", "--ray-address", cluster.address,
    )  # fmt: skip
    assert result.code == 1, result.stderr
    (record,) = json.loads(result.stdout)["requirements"]
    assert record["outcome"] == "blocked", record
    assert "nowhere" in record["reason"]
    assert len(record["promises"]) == 1 and "reviewed" in record["promises"][0], record
    assert "harness/calc" not in git(project.root, "branch", "--list", "harness/calc")
