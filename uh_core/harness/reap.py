"""Stopping what one mission's agent left, while other missions run in the same process.

``AgentGuard`` stops every child of this process that was not there before the agent
(``uh_core.isolation.reap_survivors``): right for one mission at a time, wrong beside other
missions, whose agents, gates and git commands are children of this process too. With
``--jobs`` above 1 a mission's guard stops only the processes that are its agent's: working
in its sandbox (``/proc/<pid>/cwd`` inside the worktree) or started by its agent
(``UH_SANDBOX``, which every agent's descendants inherit, names the worktree). A process
that hides both (cleared environment, ``cd /``) is not found here; the run stops every
process left once all its missions have ended (``final``), as run-all does.

Zombies, and processes whose ``/proc`` entries cannot be read, are never touched here: a
zombie may be another mission's command that its own thread is about to wait for.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from uh_core import procid
from uh_core.isolation import Survivor, children_of

GRACE_S = 0.5
KILL_WAIT_S = 5.0
ROUNDS = 20


def _inside(path: str | None, folder: Path) -> bool:
    if not path:
        return False
    real = os.path.realpath(path)
    return real == str(folder) or real.startswith(str(folder) + os.sep)


def works_in(pid: int, worktree: Path) -> bool:
    """Whether ``pid`` (alive, not a zombie) works in ``worktree`` or was started by its agent."""
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    if state in (b"Z", b"X"):
        return False
    folder = Path(os.path.realpath(worktree))
    return _inside(procid.cwd(pid), folder) or _inside(procid.environ(pid, "UH_SANDBOX"), folder)


def _alive(pids: list[int]) -> list[int]:
    left = []
    for pid in pids:
        try:
            done, _status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue  # reaped (by us, or it was not ours to wait for)
        if done == 0:
            left.append(pid)
    return left


def _signal(pids: list[int], signum: int) -> None:
    mine = os.getpgrp()
    for pid in pids:
        with contextlib.suppress(OSError):
            if os.getpgid(pid) == pid and pid != mine:
                os.killpg(pid, signum)  # the group it leads: what it started with it
        with contextlib.suppress(OSError):
            os.kill(pid, signum)


def _wait(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    left = _alive(pids)
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = _alive(left)
    return left


def reap_in(worktree: Path, exclude: set[int] | frozenset[int] = frozenset()) -> list[Survivor]:
    """Stop and reap the children of this process that work in ``worktree`` (see the module
    doc): SIGTERM to each and the group it leads, ``GRACE_S``, then SIGKILL; repeated while
    such children appear (a stopped survivor's own children are reparented to us)."""
    found: dict[int, Survivor] = {}
    stuck: set[int] = set()
    for _ in range(ROUNDS):
        pids = [
            pid
            for pid in children_of(os.getpid())
            if pid not in exclude and pid not in stuck and works_in(pid, worktree)
        ]
        if not pids:
            break
        for pid in pids:
            found.setdefault(pid, Survivor(pid, procid.cmdline(pid)))
        _signal(pids, signal.SIGTERM)
        left = _wait(pids, GRACE_S)
        if left:
            _signal(left, signal.SIGKILL)
            stuck.update(_wait(left, KILL_WAIT_S))
    return list(found.values())
