"""``harness run --jobs N``: missions side by side, real repositories and scripted agents.

Parallelism is proven by a handshake (each agent waits for the other to have started, which
a serial run would never let happen) and by the recorded start and finish times overlapping,
never by wall time. Every wait is on a file, with a generous deadline.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git
from tests.harness.conftest import PY, Project, write_config
from tests.runtime.helpers import live_processes_with
from uh_core.harness.config import Flags
from uh_core.harness.deps import Deps
from uh_core.harness.loop import HarnessRun
from uh_core.harness.prepare import prepare
from uh_core.layout import Layout
from uh_core.models.ledger import RequirementRecord
from uh_core.models.mission import Mission
from uh_core.procid import process_state, start_time

WAIT_S = 120  # what an agent waits for its partner at most: far past any honest delay


def _mission(mission_id: str, depends_on: tuple[str, ...] = ()) -> str:
    deps = f"depends_on: [{', '.join(depends_on)}]\n" if depends_on else ""
    return (
        f"id: {mission_id}\ntitle: Mission {mission_id}\nobjective: write out/{mission_id}.txt\n"
        f"status: pending\n{deps}acceptance_criteria:\n  - id: written\n"
        f"    check_command: test -f out/{mission_id}.txt\n"
    )


def _missions(project: Project, *specs: tuple[str, tuple[str, ...]]) -> None:
    git(project.root, "rm", "-q", "-r", ".harness/missions/calc")
    for mission_id, depends_on in specs:
        project.repo.mission(mission_id, _mission(mission_id, depends_on))
    write_config(project.repo, test_cmd=None)
    project.repo.commit("missions")


def _agent(project: Project, body: str = "") -> str:
    """Every mission's agent: says it started (``<id>.started``), runs ``body`` (``mid``,
    ``marks`` and ``wait_for`` are there), writes its output unless ``<id>.nowrite`` exists,
    and says it ended (``<id>.ended``)."""
    marks = project.agents / "marks"
    marks.mkdir(exist_ok=True)
    script = project.agents / "multi.py"
    head = textwrap.dedent(
        f"""\
        import os, pathlib, subprocess, sys, time
        def write(rel, text):
            path = pathlib.Path(rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        mid = os.environ["MISSION_ID"]
        marks = pathlib.Path({str(marks)!r})
        def wait_for(name):
            deadline = time.monotonic() + {WAIT_S}
            while not (marks / name).exists():
                if time.monotonic() > deadline:
                    sys.exit(f"{{name}} never appeared")
                time.sleep(0.05)
        (marks / f"{{mid}}.started").write_text(str(os.getpid()))
        """
    )
    tail = textwrap.dedent(
        """\
        if not (marks / f"{mid}.nowrite").exists():
            write(f"out/{mid}.txt", mid + "\\n")
        (marks / f"{mid}.ended").write_text("")
        """
    )
    script.write_text(head + body + tail, encoding="utf-8")
    return f"{PY} {script} {{prompt_file}}"


def _wait_for(path: Path, seconds: float = WAIT_S) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _by_id(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["mission_id"]: r for r in data["requirements"]}


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Recorded intervals overlap (timestamps share one format: they compare as text)."""
    return bool(a["started_at"] < b["finished_at"] and b["started_at"] < a["finished_at"])


def test_two_missions_run_side_by_side_and_come_out_clean(project: Project) -> None:
    _missions(project, ("alpha", ()), ("beta", ()))
    before = project.snapshot()
    # Each waits for the other to have started: only a parallel run gets past this.
    agent = _agent(project, 'wait_for("beta.started" if mid == "alpha" else "alpha.started")\n')
    result, data = project.run_json("--agent", agent, "--jobs", "2")
    assert result.code == 0, result.stderr
    assert data["status"] == "completed" and data["tampered"] == []
    assert data["settings"]["jobs"] == 2 and data["settings"]["executor"] == "local"
    assert [r["mission_id"] for r in data["requirements"]] == ["alpha", "beta"]
    alpha, beta = _by_id(data)["alpha"], _by_id(data)["beta"]
    assert alpha["outcome"] == beta["outcome"] == "pass"
    assert _overlap(alpha, beta) and _overlap(alpha["attempts"][0], beta["attempts"][0])
    assert project.show("harness/alpha", "out/alpha.txt") == "alpha\n"
    assert project.show("harness/beta", "out/beta.txt") == "beta\n"
    assert project.snapshot() == before
    # Progress lines name their mission; the audit log shows both started before either ended.
    assert "alpha: attempt 1/1" in result.stderr and "beta: attempt 1/1" in result.stderr
    ledger = json.loads((project.root / data["ledger"]).read_text())
    assert [r["mission_id"] for r in ledger["requirements"]] == ["alpha", "beta"]


def test_dependencies_gate_starts_and_a_failed_one_skips_its_dependents(
    project: Project,
) -> None:
    # broken fails; after-broken depends on it; base passes; after-base starts only once
    # base has ended; free runs beside them.
    _missions(
        project,
        ("base", ()), ("broken", ()), ("after-broken", ("broken",)),
        ("after-base", ("base",)), ("free", ()),
    )  # fmt: skip
    (project.agents / "marks").mkdir()
    (project.agents / "marks" / "broken.nowrite").write_text("")
    agent = _agent(
        project,
        'if mid == "after-base":\n'
        '    assert (marks / "base.ended").exists(), "started before base ended"\n',
    )
    result, data = project.run_json("--agent", agent, "--jobs", "3")
    assert result.code == 1, result.stderr
    reqs = _by_id(data)
    assert [r["mission_id"] for r in data["requirements"]] == [
        "base",
        "after-base",
        "broken",
        "after-broken",
        "free",
    ]  # fmt: skip  (the run's order: depends_on first, ties by id)
    assert reqs["broken"]["outcome"] == "blocked"  # its rounds ended red: handed over
    skipped = reqs["after-broken"]
    assert skipped["outcome"] == "skipped" and skipped["skip_code"] == "dependency_failed"
    assert "broken (blocked)" in (skipped["reason"] or "")
    assert not (project.agents / "marks" / "after-broken.started").exists()
    assert reqs["after-base"]["outcome"] == "pass", (reqs["after-base"]["reason"], result.stderr)
    assert reqs["free"]["outcome"] == "pass", reqs["free"]
    assert reqs["after-base"]["started_at"] >= reqs["base"]["finished_at"]
    events = project.events(".harness/missions/after-broken/events.ndjson")
    assert events[-1]["code"] == "dependency_failed"


def test_max_requirements_counts_starts_across_parallel_missions(project: Project) -> None:
    _missions(project, ("m1", ()), ("m2", ()), ("m3", ()))
    agent = _agent(project)
    result, data = project.run_json("--agent", agent, "--jobs", "3", "--max-requirements", "2")
    assert result.code == 0, result.stderr  # running out of budget is not an error
    reqs = _by_id(data)
    assert [reqs[m]["outcome"] for m in ("m1", "m2")] == ["pass", "pass"]
    assert reqs["m3"]["skip_code"] == "budget"
    assert "max_requirements 2 reached (2 started)" in (reqs["m3"]["reason"] or "")
    assert data["budget"]["started"] == 2 and data["stopped"].startswith("budget")
    assert not (project.agents / "marks" / "m3.started").exists()


def test_a_budget_reached_starts_nothing_more_and_running_missions_finish(
    project: Project,
) -> None:
    """budget_seconds 3: alpha and beta start at once (both are admitted before either
    worktree is made); their agents outlast the budget (the one sleep here exists to spend
    it, not to wait for anything); gamma, whose slot frees only then, is skipped; alpha and
    beta still get their verdicts."""
    _missions(project, ("alpha", ()), ("beta", ()), ("gamma", ()))
    agent = _agent(project, "time.sleep(4)\n")
    result, data = project.run_json("--agent", agent, "--jobs", "2", "--budget-seconds", "3")
    assert result.code == 0, result.stderr  # running out is not an error
    reqs = _by_id(data)
    assert reqs["alpha"]["outcome"] == reqs["beta"]["outcome"] == "pass"
    assert reqs["gamma"]["skip_code"] == "budget"
    assert "of budget_seconds 3" in (reqs["gamma"]["reason"] or "")
    assert not (project.agents / "marks" / "gamma.started").exists()
    assert data["stopped"].startswith("budget: ")


def _start(project: Project, *args: str) -> subprocess.Popen[str]:
    return project.repo.start("harness", "run", *args, "--json", stderr=subprocess.PIPE)


def test_cancel_stops_every_running_mission(project: Project) -> None:
    _missions(project, ("alpha", ()), ("beta", ()), ("gamma", ()))
    marker = "3172.5"
    agent = _agent(project, f'subprocess.run(["sleep", "{marker}"])\n')
    proc = _start(project, "--agent", agent, "--jobs", "2")
    marks = project.agents / "marks"
    try:
        _wait_for(marks / "alpha.started")
        _wait_for(marks / "beta.started")
        [reg] = [
            json.loads(p.read_text())
            for p in (project.root / ".harness/runs/active").glob("*.json")
        ]
        assert reg["running"] == {"alpha": 1, "beta": 1}
        # A generous wait: both agents stop, then each guard snapshots, one after the other.
        cancelled = project.repo.uh("harness", "cancel", "--wait", "150", timeout=200)
        assert cancelled.code == 0, cancelled.stderr
        assert "(missions alpha (attempt 1), beta (attempt 1))" in cancelled.stdout
        out, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert live_processes_with(f"sleep {marker}") == []  # both agents' groups ended
    data = json.loads(out)
    assert data["status"] == "interrupted" and data["stopped"] == "cancelled"
    reqs = _by_id(data)
    for mission_id in ("alpha", "beta"):
        [attempt] = reqs[mission_id]["attempts"]
        assert attempt["outcome"] == "interrupted", attempt
    assert reqs["gamma"]["skip_code"] == "stopped"
    assert not (marks / "gamma.started").exists()
    assert data["tampered"] == []


def test_kill_9_with_two_missions_in_flight_then_resume(project: Project) -> None:
    _missions(project, ("alpha", ()), ("beta", ()))
    before = project.snapshot()
    marks = project.agents / "marks"
    agent = _agent(
        project,
        'if not (marks / f"{mid}.once").exists():\n'
        '    (marks / f"{mid}.once").write_text("")\n'
        '    write(f"notes/{mid}.txt", "work in progress\\n")\n'
        '    (marks / f"{mid}.pid").write_text(str(os.getpid()))\n'
        "    time.sleep(600)\n",
    )
    harness = subprocess.Popen(
        [sys.executable, "-m", "uh_core", "harness", "run", "--agent", agent, "--jobs", "2",
         "--isolation", "none", "--root", str(project.root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        _wait_for(marks / "alpha.pid")
        _wait_for(marks / "beta.pid")
        # each agent as it is now: a pid alone may be another process later (pid_max is
        # 32,768 here, and a whole suite starts more processes than that)
        agents = {m: _agent_pid(marks / f"{m}.pid") for m in ("alpha", "beta")}
        started = {m: start_time(pid) for m, pid in agents.items()}
        harness.kill()  # SIGKILL: no ledger, no finally
        harness.wait(timeout=60)
    finally:
        if harness.poll() is None:
            harness.kill()
    assert list((project.root / ".harness/runs").glob("*.json")) == []
    # The unconfined agents outlive their runner: --resume refuses, --stop-survivors stops them.
    result, data = project.run_json("--agent", agent, "--jobs", "2", "--resume", "--stop-survivors")
    for mission_id, pid in agents.items():
        assert process_state(pid, started[mission_id]) == "gone", mission_id
    assert result.code == 0, result.stderr
    reqs = _by_id(data)
    for mission_id in ("alpha", "beta"):
        req = reqs[mission_id]
        assert req["outcome"] == "pass" and req["resumed"]["charged_attempts"] == 0
        assert project.show(f"harness/{mission_id}", f"notes/{mission_id}.txt") == (
            "work in progress\n"
        )
    assert project.snapshot() == before


def _agent_pid(path: Path) -> int:
    """The pid an agent wrote (whole: it may still be writing when the file appears)."""
    deadline = time.monotonic() + WAIT_S
    while not path.read_text().strip():
        assert time.monotonic() < deadline, f"{path} stayed empty"
        time.sleep(0.05)
    return int(path.read_text())


def test_jobs_is_validated_where_it_is_written(project: Project) -> None:
    refused = project.run("--agent", "true {prompt_file}", "--jobs", "0")
    assert refused.code == 2 and "--jobs 0: must be at least 1" in refused.stderr
    for value in ("0", '"2"', "1.5", "true"):
        write_config(project.repo, f"jobs: {value}\n")
        result = project.run("--agent", "true {prompt_file}")
        assert result.code == 2, (value, result.stderr)
        assert "harness.config.yaml:5:" in result.stderr and "jobs" in result.stderr, result.stderr
    write_config(project.repo, "jobs: 2\nexecutor: ray\nray_address: 10.0.0.1:6379\n")
    project.repo.commit("config")
    prepared = prepare(Layout(project.root), Flags(agent="true {prompt_file}"))
    settings = prepared.settings
    assert (settings.jobs, settings.executor, settings.ray_address) == (
        2, "ray", "10.0.0.1:6379",
    )  # fmt: skip
    flags = Flags(agent="true {prompt_file}", jobs=3, executor="local", ray_address="h:1")
    record = prepare(Layout(project.root), flags).settings.record()
    assert (record.jobs, record.executor, record.ray_address) == (3, "local", "h:1")


@pytest.mark.parametrize("jobs", [1, 2])
def test_every_mission_goes_through_the_run_mission_seam_with_deps_of_its_own(
    project: Project, jobs: int
) -> None:
    _missions(project, ("alpha", ()), ("beta", ("alpha",)))
    seen: list[tuple[str, Deps]] = []

    def run_mission(deps: Deps, mission: Mission) -> RequirementRecord:
        seen.append((mission.id, deps))
        return RequirementRecord(
            mission_id=mission.id, branch=f"harness/{mission.id}", outcome="pass",
            sandbox_id=f"sbx-{mission.id}", started_at="2026-01-01T00:00:00.000Z",
            finished_at="2026-01-01T00:00:01.000Z",
        )  # fmt: skip

    flags = Flags(agent="true {prompt_file}", jobs=jobs)
    runner = HarnessRun(prepare(Layout(project.root), flags), run_mission=run_mission)
    ledger = runner.run()
    assert [m for m, _ in seen] == ["alpha", "beta"]  # beta waited for alpha
    assert all(deps is not runner.deps for _, deps in seen)
    assert seen[0][1] is not seen[1][1]
    assert seen[0][1].current is runner.deps.current  # shared: the run's missions in progress
    assert seen[0][1].side_by_side is (jobs > 1)
    assert [r.outcome for r in ledger.requirements] == ["pass", "pass"]
    assert ledger.status == "completed"


def test_an_engine_failure_in_one_mission_records_every_running_one(project: Project) -> None:
    _missions(project, ("alpha", ()), ("beta", ()))
    gate = project.agents / "beta-running"

    def run_mission(deps: Deps, mission: Mission) -> RequirementRecord:
        record = RequirementRecord(
            mission_id=mission.id, branch=f"harness/{mission.id}", started_at="x"
        )
        deps.current[mission.id] = record
        if mission.id == "alpha":
            _wait_for(gate)
            raise RuntimeError("disk on fire")
        gate.write_text("")
        while deps.token.reason is None:
            time.sleep(0.02)
        record.outcome, record.reason, record.finished_at = "fail", "stopped", "y"
        return record

    runner = HarnessRun(
        prepare(Layout(project.root), Flags(agent="true {prompt_file}", jobs=2)),
        run_mission=run_mission,
    )
    with pytest.raises(RuntimeError, match="disk on fire"):
        runner.run()
    assert runner.ledger_file is not None
    ledger = json.loads(runner.ledger_file.read_text())
    assert ledger["status"] == "error" and ledger["error"] == "disk on fire"
    reqs = {r["mission_id"]: r for r in ledger["requirements"]}
    assert [r["mission_id"] for r in ledger["requirements"]] == ["alpha", "beta"]
    assert reqs["alpha"]["outcome"] == "fail" and "disk on fire" in reqs["alpha"]["reason"]
    assert reqs["beta"]["reason"] == "stopped"


def test_sigint_stops_every_running_mission(project: Project) -> None:
    _missions(project, ("alpha", ()), ("beta", ()))
    marker = "3173.5"
    agent = _agent(project, f'subprocess.run(["sleep", "{marker}"])\n')
    proc = _start(project, "--agent", agent, "--jobs", "2")
    marks = project.agents / "marks"
    try:
        _wait_for(marks / "alpha.started")
        _wait_for(marks / "beta.started")
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert live_processes_with(f"sleep {marker}") == []
    data = json.loads(out)
    assert data["status"] == "interrupted"
    assert {r["attempts"][0]["outcome"] for r in data["requirements"]} == {"interrupted"}


def test_status_and_the_dashboard_show_missions_running_side_by_side(project: Project) -> None:
    """Read live, through the readers the dashboard uses, while both agents wait."""
    _missions(project, ("alpha", ()), ("beta", ()))
    marks = project.agents / "marks"
    agent = _agent(project, 'wait_for("release")\n')
    proc = _start(project, "--agent", agent, "--jobs", "2")
    try:
        _wait_for(marks / "alpha.started")
        _wait_for(marks / "beta.started")
        status = project.repo.uh("status", "--json")
        assert status.code == 0, status.stderr
        harness = json.loads(status.stdout)["harness"]
        states = {r["mission_id"]: r["outcome"] for r in harness["requirements"]}
        assert states == {"alpha": "running", "beta": "running"}, harness
        assert harness["running"]
        frame = subprocess.run(
            [sys.executable, "-m", "uh_tui", "--root", str(project.root), "--once",
             "--view", "harness"],
            capture_output=True, text=True, timeout=WAIT_S,
        )  # fmt: skip
        assert frame.returncode == 0, frame.stderr
        running = [line for line in frame.stdout.splitlines() if "running" in line]
        assert any("alpha" in line for line in running), frame.stdout
        assert any("beta" in line for line in running), frame.stdout
    finally:
        (marks / "release").write_text("")
        out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 0, err
    assert {r["outcome"] for r in json.loads(out)["requirements"]} == {"pass"}
