"""``kill -9`` of ``harness run``: the readers say interrupted; ``--resume`` refuses while the
orphaned agent still works in the sandbox (naming it) and continues after
``--stop-survivors``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import CliResult
from tests.harness.conftest import Project
from tests.runtime.helpers import live_processes_with
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
from uh_core import procid
from uh_core.harness import survivors
from uh_core.layout import Layout

MARKER = "3173.25"


def _orphaning_agent(project: Project) -> tuple[str, Path]:
    """Attempt 1 leaves half its work, says its pid, and sleeps in the worktree; later
    attempts write the fix."""
    started = project.agents / "started"
    agent = project.agent(
        "orphan",
        f"""\
        if n == 1:
            write("notes/partial.txt", "work in progress\\n")
            pathlib.Path({str(started)!r}).write_text(str(os.getpid()))
            subprocess.run(["sleep", "{MARKER}"])
        write("src/calc.py", GOOD)
        """,
    )
    return agent, started


def _resume(project: Project, agent: str, *extra: str) -> CliResult:
    return project.repo.uh(
        "harness", "run", "--agent", agent, "--max-attempts", "2", "--isolation", "none",
        "--resume", "--json", *extra, timeout=300,
    )  # fmt: skip


def test_kill_9_of_harness_run_then_resume(project: Project) -> None:
    agent, started = _orphaning_agent(project)
    audit = project.root / ".harness/audit/events.ndjson"
    log = project.root / ".harness/missions/calc/events.ndjson"
    proc = project.repo.start(
        "harness", "run", "--agent", agent, "--max-attempts", "2", "--isolation", "none",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        run = wait_until("harness.run.started", has_event(audit, "harness.run.started"))
        agent_pid = int(wait_until("the agent", lambda: started.exists() and started.read_text()))
        wait_until("its sleep", lambda: live_processes_with(MARKER))
        assert run["owner"]["pid"] == proc.pid
        assert status(project.repo)["harness"]["running"] == run["run_id"]  # the test can tell
        kill9(proc)
        run_id = run["run_id"]
        seen = max(last_timestamp(audit, run_id), last_timestamp(log, run_id))
        data = status(project.repo)
        harness = data["harness"]
        assert harness["running"] is None
        assert (harness["interrupted"], harness["interrupted_at"]) == (run_id, seen)
        [requirement] = harness["requirements"]
        assert requirement["outcome"] == "interrupted"
        [mission] = data["missions"]
        assert mission["live"] is None and mission["harness"]["status"] == "interrupted"
        assert mission["harness"]["last_seen"] == seen
        assert mission_row(project.repo, "calc")["last_verdict"] != "running"
        frame = dashboard(project.repo, "--view", "harness")
        assert "INTERRUPTED" in frame and "● running" not in frame
        # The orphaned agent still works in the worktree: --resume refuses and names it.
        assert os.path.exists(f"/proc/{agent_pid}")
        refused = _resume(project, agent)
        assert refused.code == 2, refused.stderr
        assert f"pid {agent_pid}" in refused.stderr and "--stop-survivors" in refused.stderr
        assert refused.stderr.count("\n") == 1  # one line
        assert live_processes_with(MARKER)  # refused: nothing was stopped
        resumed = _resume(project, agent, "--stop-survivors")
        assert resumed.code == 0, resumed.stderr
        assert f"stopped what an earlier run left: pid {agent_pid}" in resumed.stderr
        assert live_processes_with(MARKER) == []
        ledger = json.loads(resumed.stdout)
        [req] = ledger["requirements"]
        assert req["outcome"] == "pass" and req["resumed"]["charged_attempts"] == 0
        assert project.show("harness/calc", "notes/partial.txt") == "work in progress\n"
        after = status(project.repo)["harness"]
        assert after["running"] is None and after["interrupted"] is None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_leftovers(MARKER)
        kill_leftovers("orphan.py")


def test_stop_survivors_needs_resume(project: Project) -> None:
    result = project.run("--agent", "true {prompt_file}", "--stop-survivors")
    assert result.code == 2 and "--stop-survivors goes with --resume" in result.stderr


def test_a_registered_live_runner_of_the_mission_is_a_survivor(project: Project) -> None:
    """A run still going (registered, alive) is named; a stale registration is not."""
    from uh_core.runtime.active import HarnessActive, write_harness

    layout = Layout(project.root)
    child = subprocess.Popen(["sleep", "30"])
    try:
        from uh_core.procid import host, start_time

        live = HarnessActive(
            "harness-live", child.pid, start_time(child.pid), host(), "T", ["calc"]
        )
        stale = HarnessActive("harness-stale", child.pid, 1, host(), "T", ["calc"])
        other = HarnessActive("harness-other", child.pid, start_time(child.pid), host(), "T", ["x"])
        for run in (live, stale, other):
            write_harness(layout, run)
        [found] = survivors.find(layout, ["calc"])
        assert found.pid == child.pid and "harness-live" in found.why
        stopped = survivors.ensure_none(layout, ["calc"], stop_them=True)
        assert [s.pid for s in stopped] == [child.pid]
        child.wait(timeout=30)
        assert survivors.find(layout, ["calc"]) == []
    finally:
        child.kill()
        child.wait()


HIDDEN = "3173.5"
GROUP = "3173.75"


def _hiding_agent(project: Project) -> tuple[str, Path]:
    """Attempt 1 leaves half its work, then becomes a ``sleep`` that works outside the
    worktree and whose environment does not name it: only the recorded group finds it."""
    started = project.agents / "hidden-started"
    agent = project.agent(
        "hider",
        f"""\
        if n == 1:
            write("notes/partial.txt", "work in progress\\n")
            pathlib.Path({str(started)!r}).write_text(str(os.getpid()))
            os.chdir("/")
            env = {{k: v for k, v in os.environ.items() if k != "UH_SANDBOX"}}
            os.execve("/bin/sleep", ["sleep", "{HIDDEN}"], env)
        write("src/calc.py", GOOD)
        """,
    )
    return agent, started


def test_resume_names_and_stops_the_recorded_agent_group_after_kill_9_of_the_runner(
    project: Project,
) -> None:
    """The agent's group is recorded on its runtime.started event; after ``kill -9`` of the
    runner (not the agent) ``--resume`` names it though it works outside the worktree with
    no UH_SANDBOX, and ``--stop-survivors`` stops the group and continues."""
    agent, started = _hiding_agent(project)
    log = project.root / ".harness/missions/calc/events.ndjson"
    proc = project.repo.start(
        "harness", "run", "--agent", agent, "--max-attempts", "2", "--isolation", "none",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        event = wait_until("runtime.started", has_event(log, "runtime.started"))
        sleeper = int(wait_until("the agent", lambda: started.exists() and started.read_text()))
        wait_until("its sleep", lambda: live_processes_with(HIDDEN))
        recorded = event["agent"]
        assert recorded["pid"] == os.getpgid(sleeper) == os.getsid(sleeper)
        assert recorded["start_time"] == procid.start_time(recorded["pid"])
        assert recorded["host"] == procid.host()
        assert os.readlink(f"/proc/{sleeper}/cwd") == "/"
        assert procid.environ(sleeper, "UH_SANDBOX") is None
        kill9(proc)
        assert os.path.exists(f"/proc/{sleeper}")  # the agent outlived its runner
        refused = _resume(project, agent)
        assert refused.code == 2, refused.stderr
        assert refused.stderr.count("\n") == 1  # one line
        assert f"the agent of harness run {event['run_id']}" in refused.stderr
        assert f"pid {sleeper} (sleep {HIDDEN})" in refused.stderr
        assert live_processes_with(HIDDEN) == [sleeper]  # refused: nothing was stopped
        resumed = _resume(project, agent, "--stop-survivors")
        assert resumed.code == 0, resumed.stderr
        assert "stopped what an earlier run left" in resumed.stderr
        assert f"pid {sleeper}" in resumed.stderr
        assert live_processes_with(HIDDEN) == []
        [req] = json.loads(resumed.stdout)["requirements"]
        assert req["outcome"] == "pass" and req["resumed"]["charged_attempts"] == 0
        assert project.show("harness/calc", "notes/partial.txt") == "work in progress\n"
        assert survivors.find(Layout(project.root), ["calc"]) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        kill_leftovers(HIDDEN)
        kill_leftovers("hider.py")
    assert live_processes_with(HIDDEN) == []


def _log_agent(layout: Layout, run_id: str, leader: int, start: int | None) -> None:
    from uh_core.events.writer import EventLog
    from uh_core.models.events import Owner, RuntimeStarted

    log = EventLog(layout.mission_events("calc"), mission_id="calc", run_id=run_id)
    owner = Owner(pid=leader, start_time=start, host=procid.host())
    log.emit(RuntimeStarted(runtime="agent", sandbox_id="sbx", command="x", agent=owner))
    log.close()


def test_a_recorded_agent_group_is_a_survivor_until_its_run_saw_it_end(project: Project) -> None:
    """Every member of the recorded group or session (not the leader alone) is named; a
    record whose pid is now another process, or whose run saw the agent end, is not."""
    from uh_core.events.writer import EventLog
    from uh_core.models.events import RuntimeFinished

    layout = Layout(project.root)
    leader = subprocess.Popen(
        ["/bin/sh", "-c", f"sleep {GROUP} & sleep {GROUP}; wait"],
        cwd="/",
        start_new_session=True,
    )
    try:
        wait_until("its two sleeps", lambda: len(live_processes_with(GROUP)) == 3)
        members = sorted(live_processes_with(GROUP))  # the shell and its two sleeps
        assert leader.pid in members
        _log_agent(layout, "harness-live", leader.pid, procid.start_time(leader.pid))
        _log_agent(layout, "harness-reused", leader.pid, 1)  # the pid is someone else now
        found = survivors.find(layout, ["calc"])
        assert [s.pid for s in found] == members
        assert all("harness run harness-live" in s.why for s in found)
        assert survivors.find(layout, ["other"]) == []  # another mission's log is not read
        log = EventLog(layout.mission_events("calc"), mission_id="calc", run_id="harness-live")
        log.emit(RuntimeFinished(runtime="agent", status="succeeded"))
        log.close()
        assert survivors.find(layout, ["calc"]) == []  # its run saw it end
        _log_agent(layout, "harness-again", leader.pid, procid.start_time(leader.pid))
        stopped = survivors.ensure_none(layout, ["calc"], stop_them=True)
        assert [s.pid for s in stopped] == members
        leader.wait(timeout=30)
        assert live_processes_with(GROUP) == []
    finally:
        if leader.poll() is None:
            os.killpg(leader.pid, 9)
            leader.wait()
        kill_leftovers(GROUP)
