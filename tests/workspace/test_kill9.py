"""``kill -9`` of ``verify`` and of ``mission run``: every reader (``mission list``, ``status
--json``, ``uh --once``) says interrupted, with when the run was last seen, never running."""

from __future__ import annotations

import subprocess

from tests.conftest import Repo
from tests.runtime.helpers import add_manifest, live_processes_with
from tests.workspace.crash import (
    dashboard,
    has_event,
    kill9,
    kill_leftovers,
    last_timestamp,
    mission_row,
    status,
    wait_until,
)

VERIFY_MARKER = "3171.25"
RUN_MARKER = "3172.75"


def test_kill_9_of_verify(repo: Repo) -> None:
    repo.mission(
        "m",
        f"""\
        id: m
        title: a slow check
        acceptance_criteria:
          - id: slow
            check_command: sleep {VERIFY_MARKER}
          - id: quick
            check_command: "true"
        """,
    )
    repo.commit("mission")
    log = repo.root / ".harness/missions/m/events.ndjson"
    proc = repo.start("verify", "m", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        started = wait_until("verification.started", has_event(log, "verification.started"))
        wait_until("the slow check", has_event(log, "acceptance.started", ac_id="slow"))
        assert started["owner"]["pid"] == proc.pid
        before = status(repo)["missions"][0]
        assert before["live"] == "verify 0/2" and before["verifying"]  # the test can tell
        kill9(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_leftovers(VERIFY_MARKER)
    seen = last_timestamp(log, started["run_id"])
    row = mission_row(repo, "m")
    assert (row["last_verdict"], row["verified_at"]) == ("interrupted", seen)
    mission = status(repo)["missions"][0]
    assert (mission["verdict"], mission["verdict_at"]) == ("interrupted", seen)
    assert mission["live"] is None and not mission["verifying"]
    assert [c["status"] for c in mission["criteria"]] == ["unobserved", "unobserved"]
    assert mission["interrupted"] == [
        f"verify interrupted: its process (pid {proc.pid}) is gone; last seen {seen}"
    ]
    text = repo.uh("status")
    assert "verify interrupted" in text.stdout and "●" not in text.stdout
    frame = dashboard(repo)
    assert "INTERRUPTED" in frame and "● verify" not in frame


def test_kill_9_of_mission_run(repo: Repo) -> None:
    repo.mission(
        "m",
        "id: m\ntitle: slow agent\nacceptance_criteria:\n  - id: a\n    check_command: 'true'\n",
    )
    add_manifest(
        repo,
        "sleeper",
        f"runtime_kind: script\nstatus: active\nconfig:\n  script: |\n"
        f"    echo working\n    sleep {RUN_MARKER}\n",
    )
    repo.commit("setup")
    log = repo.root / ".harness/missions/m/events.ndjson"
    proc = repo.start(
        "mission", "run", "m", "--runtime", "sleeper", "--isolation", "none",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        started = wait_until("runtime.started", has_event(log, "runtime.started"))
        wait_until("the agent", lambda: live_processes_with(RUN_MARKER))
        assert started["owner"]["pid"] == proc.pid
        [before] = status(repo)["missions"][0]["runtimes"]
        assert before["status"] == "running"
        kill9(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    try:
        seen = last_timestamp(log, started["run_id"])
        mission = status(repo)["missions"][0]
        [run] = mission["runtimes"]
        assert run["status"] == "interrupted" and mission["live"] is None
        assert run["error"] == (
            f"run sleeper interrupted: its process (pid {proc.pid}) is gone; last seen {seen}"
        )
        assert mission_row(repo, "m")["last_verdict"] != "running"
        frame = dashboard(repo, "--view", "runtimes", "--mission", "m")
        assert "interrupted" in frame and "● running" not in frame
        sandboxes = status(repo)["sandboxes"]
        assert [s["in_use"] for s in sandboxes] == [False]  # its registration is stale
    finally:
        kill_leftovers(RUN_MARKER)
