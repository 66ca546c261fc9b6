"""Before ``harness run --resume``: nothing of an earlier run may still be working.

A run killed hard (``kill -9``) can leave its agent running: unconfined, the agent is in a
session of its own and outlives its runner; it would keep writing in the worktree that
``--resume`` re-attaches. Survivors of the missions to resume are:

- the runner an earlier ``harness run`` registered (``uh_core.runtime.active``) while that
  process is still alive on this host and its run has one of the missions (on another host:
  named, and nothing here can stop it);
- the agent an earlier run started and never saw end: each attempt's ``runtime.started``
  in the mission's log records the agent's process (``agent``: pid, start time, host; the
  agent runs in a session and process group of its own, led by that pid). While that leader
  is still the process recorded, or once it is gone while members of its group or session
  live on, every member is a survivor, wherever it works and whatever its environment says;
- every process working in one of their sandboxes: its cwd inside the worktree
  (``/proc/<pid>/cwd``), or an environment that names the worktree (``UH_SANDBOX``, which
  every agent and its children inherit wherever they ``cd``).

This process and its ancestors (a shell started in the sandbox) are never counted. ``stop``
sends SIGTERM, waits the grace, then SIGKILL, checking before each signal that the pid is
still the process found (same start time).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from uh_core import procid
from uh_core.errors import HarnessError, UhError
from uh_core.events.reader import LogTail
from uh_core.harness.prompt import branch_name
from uh_core.layout import Layout
from uh_core.models.events import Owner, RuntimeCancelled, RuntimeFinished, RuntimeStarted
from uh_core.runtime.active import harness_runs
from uh_core.sandbox.worktree import entry_path, list_sandboxes

GRACE_S = 3.0
ROUNDS = 3  # a dying process may start another: look again, at most this often


@dataclass(frozen=True)
class Survivor:
    pid: int
    start: int | None  # its start time: the pid is signalled only while it is this process
    why: str
    command: str
    pgid: int | None = None
    elsewhere: str | None = None  # the host of a runner registered on another host

    def line(self) -> str:
        group = f", group {self.pgid}" if self.pgid is not None else ""
        return f"pid {self.pid}{group} ({self.command}): {self.why}"


def sandboxes(layout: Layout, mission_ids: Iterable[str]) -> list[Path]:
    """The worktrees of the harness sandboxes of ``mission_ids``' branches (resolved)."""
    branches = {branch_name(mission_id) for mission_id in mission_ids}
    return [
        Path(os.path.realpath(entry_path(layout, entry)))
        for entry in list_sandboxes(layout)
        if entry.kind == "harness" and entry.branch in branches
    ]


def _inside(path: str | None, folders: list[Path]) -> Path | None:
    if not path:
        return None
    resolved = Path(os.path.realpath(path))
    return next((f for f in folders if resolved == f or resolved.is_relative_to(f)), None)


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def find(layout: Layout, mission_ids: Iterable[str]) -> list[Survivor]:
    """Every survivor of an earlier run of ``mission_ids`` (see the module's docstring)."""
    missions = set(mission_ids)
    mine = procid.ancestors(os.getpid())
    found: dict[int, Survivor] = {}
    for _, run in harness_runs(layout):
        if run.pid in mine or not set(run.missions) & missions:
            continue
        state = run.state()
        if state == "gone":
            continue
        why = f"the runner of harness run {run.run_id} ({run.where()})"
        other = run.host if state == "elsewhere" else None
        command = f"on host {run.host}" if other else procid.cmdline(run.pid)
        found[run.pid] = Survivor(run.pid, run.start_time, why, command, _pgid(run.pid), other)
    for mission_id, event, agent in recorded_agents(layout, sorted(missions)):
        why = f"the agent of harness run {event.run_id} (mission {mission_id}, group {agent.pid})"
        for pid, start in group(agent):
            if pid not in mine:
                found.setdefault(pid, Survivor(pid, start, why, procid.cmdline(pid), _pgid(pid)))
    folders = sandboxes(layout, missions)
    if not folders:
        return sorted(found.values(), key=lambda s: s.pid)
    for pid in procid.pids():
        if pid in mine or pid in found:
            continue
        fields = procid.stat_fields(pid)
        if fields is None or fields[0] in ("Z", "X", "x"):
            continue
        where = _inside(procid.cwd(pid), folders)
        how = "works in"
        if where is None:
            where, how = _inside(procid.environ(pid, "UH_SANDBOX"), folders), "is the agent of"
        if where is not None:
            why = f"{how} sandbox {where}"
            found[pid] = Survivor(pid, procid.start_time(pid), why, procid.cmdline(pid), _pgid(pid))
    return sorted(found.values(), key=lambda s: s.pid)


def recorded_agents(
    layout: Layout, mission_ids: Iterable[str]
) -> list[tuple[str, RuntimeStarted, Owner]]:
    """The agents harness runs recorded starting on these missions' logs and never saw end
    (no ``runtime.finished``/``runtime.cancelled`` of that run after), on this host."""
    here = procid.host()
    found: list[tuple[str, RuntimeStarted, Owner]] = []
    for mission_id in mission_ids:
        try:
            path = layout.mission_events(mission_id)
        except UhError:
            continue
        if not path.is_file():
            continue
        started: dict[tuple[str | None, str], RuntimeStarted] = {}
        for event in LogTail(path).iter_new():
            if isinstance(event, RuntimeStarted) and event.agent is not None and event.run_id:
                started[(event.run_id, event.runtime)] = event
            elif isinstance(event, RuntimeFinished | RuntimeCancelled):
                started.pop((event.run_id, event.runtime), None)
        for event in started.values():
            agent = event.agent
            if agent is not None and (agent.host is None or agent.host == here):
                found.append((mission_id, event, agent))  # another host's: not ours to stop
    return found


def group(agent: Owner) -> list[tuple[int, int | None]]:
    """``(pid, start time)`` of every live process of the agent's group or session (the
    leader's pid names both). While the leader is still the process recorded, it and its
    members; once it is gone, what is left of its group and session (the kernel does not give
    a pid out again while a group or session holds it as its id), started after it."""
    leader = agent.pid
    if leader <= 1:
        return []
    if agent.start_time is not None and procid.start_time(leader) not in (None, agent.start_time):
        return []  # the pid is another process now, leading its own group
    members: list[tuple[int, int | None]] = []
    for pid in procid.pids():
        fields = procid.stat_fields(pid)
        if fields is None or fields[0] in ("Z", "X", "x"):
            continue
        try:
            pgrp, session, start = int(fields[2]), int(fields[3]), int(fields[19])
        except (IndexError, ValueError):
            continue
        if leader not in (pgrp, session):
            continue
        if agent.start_time is not None and start < agent.start_time:
            continue  # older than the agent: not of its group
        members.append((pid, start))
    return members


def refusal(survivors: list[Survivor]) -> HarnessError:
    """One line naming them, grouped by why (the sandbox they work in, the runner)."""
    groups: dict[str, list[Survivor]] = {}
    for survivor in survivors:
        groups.setdefault(survivor.why, []).append(survivor)
    shown = "; ".join(
        f"{why}: "
        + ", ".join(f"pid {s.pid} ({_short(s.command)})" for s in found[:5])
        + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        for why, found in groups.items()
    )
    return HarnessError(
        f"--resume: {len(survivors)} process(es) of an earlier run still alive — {shown}",
        fix="let them end, stop them, or add --stop-survivors (SIGTERM, then SIGKILL)",
    )


def _short(command: str, limit: int = 60) -> str:
    return command if len(command) <= limit else command[: limit - 1] + "…"


def _alive(survivor: Survivor) -> bool:
    return procid.process_state(survivor.pid, survivor.start) == "running"


def _signal(survivors: Iterable[Survivor], signum: int) -> None:
    for survivor in survivors:
        if _alive(survivor):  # still that process: a reused pid is never signalled
            with contextlib.suppress(OSError):
                os.kill(survivor.pid, signum)


def _wait(survivors: list[Survivor], seconds: float) -> list[Survivor]:
    deadline = time.monotonic() + seconds
    while True:
        alive = [s for s in survivors if _alive(s)]
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.05)


def stop(survivors: list[Survivor], grace: float = GRACE_S) -> list[Survivor]:
    """SIGTERM, ``grace`` seconds, SIGKILL; returns those still alive after."""
    local = [s for s in survivors if s.elsewhere is None]
    _signal(local, signal.SIGTERM)
    alive = _wait(local, grace)
    _signal(alive, signal.SIGKILL)
    return _wait(alive, grace)


def ensure_none(layout: Layout, mission_ids: Iterable[str], *, stop_them: bool) -> list[Survivor]:
    """Refuse (exit 2, naming them) while survivors live; with ``stop_them`` stop them first
    and return who was stopped. A runner on another host cannot be stopped from here."""
    missions = list(mission_ids)
    survivors = find(layout, missions)
    if not survivors:
        return []
    if not stop_them or any(s.elsewhere for s in survivors):
        raise refusal(survivors)
    stopped: dict[int, Survivor] = {}
    for _ in range(ROUNDS):
        stopped.update((s.pid, s) for s in survivors)
        left = stop(survivors)
        survivors = left or find(layout, missions)  # what a dying process started, too
        if not survivors:
            return sorted(stopped.values(), key=lambda s: s.pid)
    raise refusal(survivors)
