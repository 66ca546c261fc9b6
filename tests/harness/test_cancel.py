"""``harness cancel`` and ``mission cancel`` on a harness run: real runs, real signals."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Repo
from tests.harness.conftest import Project
from tests.runtime.helpers import live_processes_with
from uh_core.runtime.active import start_time


def _wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _slow_agent(project: Project, marker: str) -> tuple[str, Path]:
    """Attempt 1 leaves half its work, says it started, and sleeps; later ones finish."""
    started = project.agents / "started"
    agent = project.agent(
        "slow",
        f"""\
        if n == 1:
            write("notes/partial.txt", "work in progress\\n")
            pathlib.Path({str(started)!r}).write_text(str(os.getpid()))
            subprocess.run(["sleep", "{marker}"])
        write("src/calc.py", GOOD)
        """,
    )
    return agent, started


def _registrations(root: Path) -> list[dict[str, Any]]:
    folder = root / ".harness/runs/active"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]


def _start(project: Project, agent: str) -> subprocess.Popen[str]:
    return project.repo.start(
        "harness", "run", "--agent", agent, "--max-attempts", "2", "--json",
        stderr=subprocess.PIPE,
    )  # fmt: skip


def _finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    data: dict[str, Any] = json.loads(out)
    return data


def test_cancel_stops_the_run_and_resume_continues_it(project: Project) -> None:
    before = project.snapshot()
    marker = "3171.5"
    agent, started = _slow_agent(project, marker)
    proc = _start(project, agent)
    try:
        _wait_for(started)
        [reg] = _registrations(project.root)
        assert reg["pid"] == proc.pid and reg["start_time"] == start_time(proc.pid)
        assert reg["host"] == socket.gethostname()
        assert (reg["mission"], reg["attempt"], reg["missions"]) == ("calc", 1, ["calc"])
        # the sandbox it works in is held: a discard refuses it, status counts it in use
        [held] = reg["sandboxes"].values()
        refused = project.repo.uh("sandbox", "discard", held)
        assert refused.code != 0 and "Traceback" not in refused.stderr, refused.stderr
        assert f"sandbox {held} is in use by a running harness run" in refused.stderr
        assert f"uh-core harness cancel {reg['run_id']}" in refused.stderr
        kept = project.repo.uh("sandbox", "discard", "--all")
        assert kept.stdout == f"kept {held}: in use by a running harness run\n", kept.stdout
        status = json.loads(project.repo.uh("status", "--json").stdout)
        assert [s["in_use"] for s in status["sandboxes"] if s["id"] == held] == [True]
        cancelled = project.repo.uh("harness", "cancel")
        assert cancelled.code == 0, cancelled.stderr
        run_id = reg["run_id"]
        assert cancelled.stdout == f"cancelled harness run {run_id} (mission calc, attempt 1)\n"
        data = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert live_processes_with(f"sleep {marker}") == []  # the agent's group ended
    assert _registrations(project.root) == []
    assert data["run_id"] == run_id and data["status"] == "interrupted"
    assert data["stopped"] == "cancelled"
    ledger = json.loads((project.root / data["ledger"]).read_text())
    assert ledger["status"] == "interrupted"
    [req] = ledger["requirements"]
    [attempt] = req["attempts"]
    assert attempt["outcome"] == "interrupted" and attempt["verdict"] == "stopped: cancelled"
    assert project.snapshot() == before  # a cancel is not tampering, and nothing leaked
    # --resume continues on the branch: the interrupted attempt is not charged.
    result, resumed = project.run_json("--agent", agent, "--max-attempts", "2", "--resume")
    assert result.code == 0, result.stderr
    [req] = resumed["requirements"]
    assert req["outcome"] == "pass" and req["resumed"]["charged_attempts"] == 0
    assert project.show("harness/calc", "notes/partial.txt") == "work in progress\n"


def test_mission_cancel_stops_the_harness_run_working_on_it(project: Project) -> None:
    agent, started = _slow_agent(project, "3172.5")
    proc = _start(project, agent)
    try:
        _wait_for(started)
        [reg] = _registrations(project.root)
        cancelled = project.repo.uh("mission", "cancel", "calc")
        assert cancelled.code == 0, cancelled.stderr
        assert cancelled.stdout == (
            f"cancelled harness run {reg['run_id']} (mission calc, attempt 1)\n"
        )
        data = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert data["requirements"][0]["attempts"][0]["outcome"] == "interrupted"
    assert data["stopped"] == "cancelled"


@pytest.fixture
def sleeper() -> Any:
    """A live process that is not a harness run (cancel must never signal it)."""
    proc = subprocess.Popen(["sleep", "600"])
    yield proc
    proc.kill()
    proc.wait()


def _register(repo: Repo, run_id: str, pid: int, **extra: Any) -> Path:
    data = {
        "run_id": run_id,
        "pid": pid,
        "start_time": start_time(pid),
        "host": socket.gethostname(),
        "started_at": "2026-01-01T00:00:00.000Z",
        "missions": ["calc"],
        "mission": "calc",
        "attempt": 1,
        **extra,
    }
    path = repo.root / f".harness/runs/active/{run_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_nothing_running(repo: Repo) -> None:
    result = repo.uh("harness", "cancel")
    assert result.code == 1 and "no harness run is running" in result.stderr
    named = repo.uh("harness", "cancel", "harness-20260101T000000Z-abcdef")
    assert named.code == 1
    assert "harness run harness-20260101T000000Z-abcdef is not running" in named.stderr


def test_a_stale_registration_is_removed_and_nothing_is_signalled(
    repo: Repo, sleeper: subprocess.Popen[bytes]
) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    gone = _register(repo, "harness-20260101T000000Z-000001", dead.pid)
    stale_start = (start_time(sleeper.pid) or 0) + 1  # the pid now names another process
    reused = _register(repo, "harness-20260101T000000Z-000002", sleeper.pid, start_time=stale_start)
    result = repo.uh("harness", "cancel", "harness-20260101T000000Z-000002")
    assert result.code == 1 and "is not running: its runner is gone" in result.stderr
    assert not reused.exists() and not gone.exists()  # every stale registration goes
    result = repo.uh("harness", "cancel")
    assert result.code == 1 and "no harness run is running" in result.stderr
    assert sleeper.poll() is None


def test_several_running_runs_must_be_named(repo: Repo, sleeper: subprocess.Popen[bytes]) -> None:
    other = subprocess.Popen(["sleep", "600"])
    try:
        _register(repo, "harness-20260101T000000Z-000001", sleeper.pid)
        _register(repo, "harness-20260101T000000Z-000002", other.pid, mission="parse")
        result = repo.uh("harness", "cancel")
        assert result.code == 2
        assert "2 harness runs are running" in result.stderr
        assert "harness-20260101T000000Z-000001 (mission calc, attempt 1)" in result.stderr
        assert "harness-20260101T000000Z-000002 (mission parse, attempt 1)" in result.stderr
        assert "uh-core harness cancel RUN_ID" in result.stderr
        assert sleeper.poll() is None and other.poll() is None
    finally:
        other.kill()
        other.wait()


def test_mission_cancel_names_a_harness_run_that_will_reach_it(
    repo: Repo, sleeper: subprocess.Popen[bytes]
) -> None:
    repo.mission("calc", "id: calc\ntitle: Calc\n")
    _register(repo, "harness-20260101T000000Z-000001", sleeper.pid, mission="parse",
              missions=["parse", "calc"])  # fmt: skip
    result = repo.uh("mission", "cancel", "calc")
    assert result.code == 1
    assert result.stdout == (
        "nothing is running for mission calc yet: harness run harness-20260101T000000Z-000001 "
        "will reach it (`uh-core harness cancel harness-20260101T000000Z-000001` stops that "
        "run)\n"
    )
    assert sleeper.poll() is None
    assert os.path.exists(repo.root / ".harness/runs/active/harness-20260101T000000Z-000001.json")
