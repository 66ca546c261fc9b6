"""No survivors for unconfined runs: this process becomes a child subreaper, so whatever an
agent leaves behind (``setsid`` and double-forked daemons included) is reparented to us
instead of to init, and ``reap_survivors`` stops and reaps it.

``reap_survivors`` takes every child of ours that is not in ``exclude``, and everything
they started: the caller passes the pids of children it still owns (other runs' agents),
or calls it when it has none. It goes on until nothing is left — no round cap — freezing
the tree before killing it, so a daemon that re-forks faster than we kill cannot outrun it
(``stopping.py``).
Linux only (``/proc`` and ``prctl``); elsewhere ``become_subreaper`` says False and there
is nothing reparented to reap.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Iterable, Set

from uh_core.isolation.proctree import read, table
from uh_core.isolation.stopping import stop_tree
from uh_core.isolation.survivors import Survivor, Survivors

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
KILL_WAIT_S = 2.0

__all__ = [
    "Survivor",
    "Survivors",
    "become_subreaper",
    "children_of",
    "is_subreaper",
    "reap_survivors",
]


def _prctl(option: int, arg: int | ctypes.c_int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        arg2 = ctypes.byref(arg) if isinstance(arg, ctypes.c_int) else arg
        return int(libc.prctl(option, arg2, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux); idempotent."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def is_subreaper() -> bool:
    """Whether this process is a child subreaper (False off Linux)."""
    flag = ctypes.c_int(0)
    return _prctl(PR_GET_CHILD_SUBREAPER, flag) and flag.value != 0


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` (zombies included), by scanning ``/proc/*/stat``."""
    return sorted(proc.pid for proc in table().get(pid, []))


def _protected_groups(protected: Iterable[int]) -> set[int]:
    """Process groups never signalled as a whole: ours, our parent's, each excluded pid's."""
    groups = {os.getpgrp(), 0, 1}
    for pid in (*protected, os.getppid()):
        proc = read(pid)
        if proc is not None:
            groups.add(proc.pgid)
    return groups


def reap_survivors(exclude: Set[int] = frozenset(), grace_s: float = 0.5) -> Survivors:
    """Stop and reap every child of this process not in ``exclude``, and all it started:
    SIGTERM to each (and to a child's process group), ``grace_s`` to end, then freeze
    what is left with SIGSTOP until nothing new appears, SIGKILL it and reap it — again
    and again until nothing is left, with no cap on the rounds (``isolation/stopping.py``).

    Returns every distinct process found alive (``Survivors``: a list of ``Survivor``,
    first seen first, at most ``LISTED_MAX`` of them, ``unlisted`` counting the rest).
    Zombies and processes already exiting are reaped but not reported; one that outlasts
    SIGKILL by ``KILL_WAIT_S`` (stuck in the kernel) is reported (``stuck``) and left.

    Never signals a pid in ``exclude``, this process, or a group one of them (or our
    parent) belongs to. Useful after ``become_subreaper()``: orphans are our children then.
    """
    protected = {*exclude, os.getpid()}
    spared = _protected_groups(protected)
    return stop_tree(
        lambda proc: proc.pid not in protected,
        lambda proc: None if proc.pgid in spared else proc.pgid,
        grace_s=grace_s,
        kill_wait_s=KILL_WAIT_S,
    )
