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
zombie may be another mission's command that its own thread is about to wait for — unless
it was seen alive as this mission's (a fork-racing daemon's exited generations). There is
no round cap: the mission's tree is frozen, then killed, until nothing of it is left.
"""

from __future__ import annotations

import os
from pathlib import Path

from uh_core import procid
from uh_core.isolation.proctree import Proc
from uh_core.isolation.stopping import stop_tree
from uh_core.isolation.survivors import Survivors

GRACE_S = 0.5
KILL_WAIT_S = 5.0


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


def _group_led(proc: Proc) -> int | None:
    """The group ``proc`` leads (what it started with it), unless it is ours."""
    return proc.pgid if proc.pgid == proc.pid and proc.pgid != os.getpgrp() else None


def reap_in(worktree: Path, exclude: set[int] | frozenset[int] = frozenset()) -> Survivors:
    """Stop and reap the children of this process that work in ``worktree`` (see the module
    doc), and everything they started: SIGTERM to each and the group it leads,
    ``GRACE_S``, then freeze with SIGSTOP, SIGKILL and reap, until nothing is left — no
    round cap (``uh_core/isolation/stopping.py``). Returns every distinct process found
    alive (``Survivors``)."""
    return stop_tree(
        lambda proc: not proc.ended and proc.pid not in exclude and works_in(proc.pid, worktree),
        _group_led,
        grace_s=GRACE_S,
        kill_wait_s=KILL_WAIT_S,
    )
