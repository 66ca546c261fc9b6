"""``harness cancel``: stop a running ``harness run`` the way Ctrl-C does, from elsewhere.

The runner registered itself (``uh_core.runtime.active.HarnessRegistration``). A cancel
checks that the registered pid is still that process (same start time, same host), leaves
its reason beside the registration and sends SIGTERM; the runner's handler cancels its
token: the agent's group is stopped, the attempt recorded ``interrupted``, the missions not
reached skipped, the ledger written (``interrupted``), the registration removed. The
cancel waits for that, so when it reports "cancelled" the ledger is on disk and
``harness run --resume`` can continue. A registration whose process is gone (or whose pid
now names another process) is stale: removed, and reported as not running.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uh_core.errors import NotRunningError, UsageError
from uh_core.layout import Layout
from uh_core.runtime.active import (
    HarnessActive,
    harness_runs,
    read_harness,
    request_cancel,
    unregister,
)

CANCELLED = "cancelled"


@dataclass
class Live:
    path: Path
    run: HarnessActive
    elsewhere: bool = False  # registered on another host: cannot be checked or signalled here


@dataclass
class Outcome:
    run_id: str
    where: str  # "mission divide, attempt 2"
    mission: str | None
    attempt: int
    ended: bool  # the runner finished (ledger written) within the wait
    status: str | None = None  # the ledger's status once it ended
    ledger: str | None = None

    def line(self) -> str:
        if self.ended:
            return f"cancelled harness run {self.run_id} ({self.where})"
        return (
            f"asked harness run {self.run_id} to stop ({self.where}); it has not ended yet "
            f"(the attempt in progress is finishing)"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "mission": self.mission,
            "attempt": self.attempt,
            "ended": self.ended,
            "status": self.status,
            "ledger": self.ledger,
        }


def live_runs(layout: Layout) -> tuple[list[Live], list[str]]:
    """Registered runs whose runner is still that process; stale registrations are removed
    and their run ids returned second."""
    live: list[Live] = []
    stale: list[str] = []
    for path, run in harness_runs(layout):
        state = run.state()
        if state == "gone":
            unregister(path)
            stale.append(run.run_id)
        else:
            live.append(Live(path, run, elsewhere=state == "elsewhere"))
    return live, stale


def _not_running(layout: Layout, run_id: str, stale: list[str]) -> NotRunningError:
    from uh_core.harness.ledger import ledger_path, read_ledger

    ledger = ledger_path(layout, run_id)
    if run_id in stale:
        what = "its runner is gone (the stale registration was removed)"
    elif ledger.is_file():
        try:
            what = f"it ended ({read_ledger(ledger).status})"
        except Exception:  # an unreadable ledger still means the run ended
            what = "it ended"
    else:
        what = "no such run is registered"
    return NotRunningError(
        f"harness run {run_id} is not running: {what}",
        fix="`uh-core status` shows what is running",
    )


def choose(layout: Layout, run_id: str | None) -> Live:
    """The run to cancel: ``run_id``'s, else the only running one."""
    live, stale = live_runs(layout)
    if run_id is not None:
        found = next((item for item in live if item.run.run_id == run_id), None)
        if found is None:
            raise _not_running(layout, run_id, stale)
        return found
    if not live:
        gone = f" ({len(stale)} stale registration(s) removed)" if stale else ""
        raise NotRunningError(f"no harness run is running{gone}")
    if len(live) > 1:
        listed = "; ".join(f"{item.run.run_id} ({item.run.where()})" for item in live)
        raise UsageError(
            f"{len(live)} harness runs are running: {listed}",
            fix="name one: uh-core harness cancel RUN_ID",
        )
    return live[0]


def on_mission(layout: Layout, mission_id: str) -> tuple[list[Live], list[Live]]:
    """Running harness runs working on ``mission_id`` now, and those that will reach it."""
    live, _stale = live_runs(layout)
    working = [
        item for item in live if item.run.mission == mission_id or mission_id in item.run.running
    ]
    queued = [item for item in live if item not in working and mission_id in item.run.missions]
    return working, queued


def cancel(layout: Layout, target: Live, reason: str | None = None, wait_s: float = 30) -> Outcome:
    """Ask ``target``'s runner to stop (SIGTERM, with the reason beside its registration)
    and wait up to ``wait_s`` for it to end."""
    run = _current(target)
    if target.elsewhere:
        raise NotRunningError(
            f"harness run {run.run_id} runs on host {run.host}, not here",
            fix=f"cancel it on {run.host}",
        )
    request_cancel(target.path, f"{CANCELLED}: {reason}" if reason else CANCELLED)
    with contextlib.suppress(ProcessLookupError):  # it ended in between: what it wrote stands
        os.kill(run.pid, signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while target.path.exists() and time.monotonic() < deadline:
        if run.state() == "gone":
            unregister(target.path)  # it died without removing its registration
            break
        time.sleep(0.05)
    outcome = Outcome(run.run_id, run.where(), run.mission, run.attempt, not target.path.exists())
    if outcome.ended:
        _read_end(layout, outcome)
    return outcome


def _current(target: Live) -> HarnessActive:
    """The registration as the runner last wrote it (it moves on as the run goes)."""
    return read_harness(target.path) or target.run


def _read_end(layout: Layout, outcome: Outcome) -> None:
    from uh_core.errors import UhError
    from uh_core.harness.ledger import ledger_path, read_ledger

    path = ledger_path(layout, outcome.run_id)
    try:
        outcome.status = read_ledger(path).status
        outcome.ledger = layout.rel(path)
    except UhError:
        outcome.status = None
