"""Running states whose owner is gone read ``interrupted`` in the workspace's snapshot (what
the dashboard and ``status --json`` show): a dead pid, a reused pid, on this host; another
host's owner stays running with its host named; logs without owners stay as they say."""

from __future__ import annotations

import socket
import subprocess

import pytest

from tests.conftest import Repo
from uh_core import procid
from uh_core.events.writer import EventLog
from uh_core.layout import Layout
from uh_core.models.events import (
    AcceptanceChecked,
    AcceptanceStarted,
    HarnessAttemptStarted,
    HarnessParked,
    HarnessRequirementStarted,
    HarnessRunStarted,
    Owner,
    RuntimeProgress,
    RuntimeStarted,
    VerificationFinished,
    VerificationStarted,
)
from uh_core.models.ledger import HarnessLedger
from uh_core.procid import start_time
from uh_core.runtime.active import HarnessActive, write_harness
from uh_core.workspace.store import Store

MISSION = """\
id: m
title: two checks
acceptance_criteria:
  - id: first
    check_command: "true"
  - id: second
    check_command: "true"
"""


def dead_owner() -> Owner:
    """A process that was real and has ended (its pid free or reused by now)."""
    child = subprocess.Popen(["sleep", "30"])
    started = start_time(child.pid)
    child.kill()
    child.wait()
    return Owner(pid=child.pid, start_time=started, host=socket.gethostname())


def reused_owner() -> Owner:
    """A pid that is alive now, but is not the process that was recorded."""
    me = Owner.here()
    assert me.start_time is not None
    return Owner(pid=me.pid, start_time=me.start_time - 1, host=me.host)


@pytest.fixture
def layout(repo: Repo) -> Layout:
    repo.mission("m", MISSION)
    return Layout(repo.root)


def _verify(layout: Layout, owner: Owner | None) -> None:
    log = EventLog(layout.mission_events("m"), mission_id="m", run_id="verify-1")
    log.emit(VerificationStarted(total_acceptance=2, owner=owner, timestamp="2026-01-15T12:00:00Z"))
    log.emit(AcceptanceStarted(ac_id="first", index=0, total=2, timestamp="2026-01-15T12:00:01Z"))


@pytest.mark.parametrize("make", [dead_owner, reused_owner], ids=["dead", "reused"])
def test_a_verify_whose_process_is_gone_is_interrupted(layout: Layout, make: object) -> None:
    owner = make()  # type: ignore[operator]
    _verify(layout, owner)
    mission = Store(layout.root).settle().mission("m")
    assert mission is not None
    assert (mission.verdict, mission.verdict_at) == ("interrupted", "2026-01-15T12:00:01Z")
    assert mission.live is None and not mission.verifying
    assert [c.status for c in mission.criteria] == ["unobserved", "unobserved"]
    assert mission.interrupted == (
        f"verify interrupted: its process (pid {owner.pid}) is gone; "
        "last seen 2026-01-15T12:00:01Z",
    )


def test_a_live_verify_and_one_without_owner_are_running(layout: Layout) -> None:
    _verify(layout, Owner.here())
    mission = Store(layout.root).settle().mission("m")
    assert mission is not None and mission.live == "verify 0/2" and mission.verifying
    assert [c.status for c in mission.criteria] == ["running", "pending"]
    layout.mission_events("m").unlink()
    _verify(layout, None)  # an older log: shown as it says
    mission = Store(layout.root).settle().mission("m")
    assert mission is not None and mission.live == "verify 0/2" and not mission.interrupted


def test_another_hosts_owner_is_running_there(layout: Layout) -> None:
    _verify(layout, Owner(pid=1, start_time=1, host="elsewhere.invalid"))
    mission = Store(layout.root).settle().mission("m")
    assert mission is not None and mission.live == "verify 0/2 on elsewhere.invalid"
    assert mission.verdict == "-" and not mission.interrupted


def test_a_finished_verify_is_not_checked(layout: Layout) -> None:
    _verify(layout, dead_owner())
    log = EventLog(layout.mission_events("m"), mission_id="m", run_id="verify-1")
    log.emit(AcceptanceChecked(ac_id="first", status="passed"))
    log.emit(AcceptanceStarted(ac_id="second", index=1, total=2))
    log.emit(AcceptanceChecked(ac_id="second", status="passed"))
    log.emit(VerificationFinished(status="passed"))
    mission = Store(layout.root).settle().mission("m")
    assert mission is not None and mission.verdict == "passed" and not mission.interrupted


def test_a_mission_run_whose_runner_is_gone_is_interrupted(layout: Layout) -> None:
    owner = dead_owner()
    log = EventLog(layout.mission_events("m"), mission_id="m", run_id="sbx-1")
    log.emit(RuntimeStarted(runtime="alpha", sandbox_id="sbx-1", owner=owner, timestamp="T1"))
    log.emit(RuntimeProgress(runtime="alpha", message="working", timestamp="T2"))
    mission = Store(layout.root).settle().mission("m")
    assert mission is not None and mission.live is None
    [run] = mission.runtimes
    assert run.status == "interrupted" and run.error is not None
    assert f"pid {owner.pid}" in run.error and "last seen T2" in run.error


def _harness(layout: Layout, owner: Owner | None, run_id: str = "harness-1") -> None:
    audit = EventLog(layout.audit_log, run_id=run_id)
    audit.emit(HarnessRunStarted(missions=["m"], owner=owner, timestamp="T1"))
    log = EventLog(layout.mission_events("m"), mission_id="m", run_id=run_id)
    log.emit(HarnessRequirementStarted(branch="harness/m", owner=owner, timestamp="T2"))
    log.emit(HarnessAttemptStarted(attempt=1, timestamp="T3"))
    log.emit(RuntimeStarted(runtime="agent", timestamp="T4"))  # the agent: the run's owner
    log.emit(RuntimeProgress(runtime="agent", message="thinking", timestamp="T5"))


def test_a_harness_run_whose_runner_is_gone_is_interrupted(layout: Layout) -> None:
    owner = dead_owner()
    _harness(layout, owner)
    # a ledger it wrote after an earlier mission still says running
    ledger = HarnessLedger(run_id="harness-1", started_at="T1", root=str(layout.root))
    (layout.ledgers_dir / "harness-1.json").parent.mkdir(parents=True, exist_ok=True)
    (layout.ledgers_dir / "harness-1.json").write_text(ledger.model_dump_json())
    snapshot = Store(layout.root).settle()
    harness = snapshot.harness
    assert harness.running is None
    assert (harness.interrupted, harness.interrupted_at) == ("harness-1", "T5")
    [requirement] = harness.requirements
    assert requirement.outcome == "interrupted" and "last seen T5" in (requirement.reason or "")
    [run] = harness.ledgers
    assert (run.status, run.last_seen) == ("interrupted", "T5")
    mission = snapshot.mission("m")
    assert mission is not None and mission.live is None
    assert mission.harness is not None and mission.harness.status == "interrupted"
    assert mission.harness.last_seen == "T5"
    assert [r.status for r in mission.runtimes] == []  # the agent is the harness view's


def test_a_live_harness_run_and_its_registered_ledger_are_running(layout: Layout) -> None:
    _harness(layout, Owner.here())
    me = Owner.here()
    write_harness(layout, HarnessActive("harness-0", me.pid, me.start_time, me.host or "", "T0"))
    for run_id in ("harness-0", "harness-old"):  # registered and alive; neither (long gone)
        ledger = HarnessLedger(run_id=run_id, started_at="T0", root=str(layout.root))
        layout.ledgers_dir.mkdir(parents=True, exist_ok=True)
        (layout.ledgers_dir / f"{run_id}.json").write_text(ledger.model_dump_json())
    snapshot = Store(layout.root).settle()
    harness = snapshot.harness
    assert harness.running == "harness-1" and harness.interrupted is None
    assert [r.outcome for r in harness.requirements] == ["running"]
    assert {r.run_id: r.status for r in harness.ledgers} == {
        "harness-0": "running",
        "harness-old": "interrupted",
    }
    mission = snapshot.mission("m")
    assert mission is not None and mission.live == "run agent · harness #1 agent"


def test_proc_is_read_once_per_owner_per_refresh_and_only_while_running(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner = dead_owner()
    _verify(layout, owner)
    calls: list[int] = []
    real = procid.process_state

    def counting(pid: int, started: int | None, on_host: str | None = None) -> procid.State:
        calls.append(pid)
        return real(pid, started, on_host)

    monkeypatch.setattr(procid, "process_state", counting)
    store = Store(layout.root)
    store.full()
    assert calls == [owner.pid]  # gone? elsewhere? — one read, from the refresh's probe
    store.full()
    assert calls == [owner.pid] * 2  # each refresh looks again
    log = EventLog(layout.mission_events("m"), mission_id="m", run_id="verify-1")
    log.emit(VerificationFinished(status="blocked"))
    calls.clear()
    store.full()
    assert calls == []  # nothing running: nothing to ask


def test_a_mission_running_on_a_ray_node_is_shown_on_it(layout: Layout) -> None:
    """``--executor ray``: the head relays the worker's events with ``node`` set; the
    mission's live line names the node (the same files a script reads)."""
    log = EventLog(layout.mission_events("m"), mission_id="m", run_id="harness-1")
    node = "worker-7 (node 1a2b3c4d)"
    log.emit(HarnessRequirementStarted(branch="harness/m", owner=Owner.here(), node=node))
    log.emit(HarnessAttemptStarted(attempt=2, node=node))
    mission = Store(layout.root).settle().mission("m")
    assert mission is not None and mission.live == f"harness #2 agent on {node}"


def test_a_parked_mission_shows_when_it_resumes_then_runs_again(layout: Layout) -> None:
    _harness(layout, Owner.here())
    log = EventLog(layout.mission_events("m"), mission_id="m", run_id="harness-1")
    log.emit(
        HarnessParked(
            attempt=1, runtime="claude", until="2026-12-06T18:00:03.000Z", wait_s=3.0,
            timestamp="T6",
        )
    )  # fmt: skip
    [parked] = Store(layout.root).settle().harness.requirements
    assert parked.outcome == "parked"
    assert parked.reason == "claude rate limited: resumes at 2026-12-06T18:00:03.000Z"
    log.emit(HarnessAttemptStarted(attempt=2, timestamp="T7"))  # the limit lifted
    [running] = Store(layout.root).settle().harness.requirements
    assert (running.outcome, running.attempts) == ("running", 2)
