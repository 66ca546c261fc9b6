"""No survivors for unconfined runs: this process becomes a child subreaper, so whatever an
agent leaves behind (``setsid`` and double-forked daemons included) is reparented to us
instead of to init, and ``reap_survivors`` stops and reaps it.

``reap_survivors`` takes every child of ours that is not in ``exclude``: the caller passes
the pids of children it still owns (other runs' agents), or calls it when it has none.
Linux only (``/proc`` and ``prctl``); elsewhere ``become_subreaper`` says False and there
is nothing reparented to reap.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from collections.abc import Iterable, Set
from dataclasses import dataclass

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
MAX_ROUNDS = 50
KILL_WAIT_S = 2.0
CMDLINE_CHARS = 200
PF_EXITING = 0x4  # task flag in /proc/<pid>/stat field 9


@dataclass(frozen=True)
class Survivor:
    """A process found alive after a run, and what it was running."""

    pid: int
    cmdline: str


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


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, pgid) of ``pid`` from ``/proc/<pid>/stat``; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # comm (field 2) may hold spaces and parentheses: the fields start after the last ')'.
    fields = data.rsplit(b")", 1)[-1].split()
    try:
        return fields[0].decode("ascii", "replace"), int(fields[1]), int(fields[2])
    except (IndexError, ValueError):
        return None


def _kill_pending(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"ShdPnd:"):
                    return bool(int(line.split()[1], 16) & 1 << (signal.SIGKILL - 1))
    except (OSError, IndexError, ValueError):
        pass
    return False


def _dying(pid: int) -> bool:
    """Whether ``pid`` is already being torn down: SIGKILL pending, or every thread exiting
    (``PF_EXITING``) — e.g. bwrap's PID 1, killed as the bwrap it belonged to ended and
    reparented to us meanwhile. Such a process is reaped, not reported as a survivor."""
    if _kill_pending(pid):
        return True
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as handle:
                flags = int(handle.read().rsplit(b")", 1)[-1].split()[6])
        except (OSError, IndexError, ValueError):
            continue
        if not flags & PF_EXITING:
            return False
    return bool(tasks)


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` (zombies included), by scanning ``/proc/*/stat``."""
    found = []
    for candidate in _pids():
        info = _stat(candidate)
        if info is not None and info[1] == pid:
            found.append(candidate)
    return sorted(found)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read(4 * CMDLINE_CHARS)
    except OSError:
        raw = b""
    text = " ".join(raw.decode("utf-8", "replace").split("\0")).strip()
    if not text:
        try:
            with open(f"/proc/{pid}/comm", "rb") as handle:
                text = f"[{handle.read().decode('utf-8', 'replace').strip()}]"
        except OSError:
            text = "?"
    return text if len(text) <= CMDLINE_CHARS else text[: CMDLINE_CHARS - 1] + "…"


def _protected_groups(protected: Iterable[int]) -> set[int]:
    """Process groups never signalled as a whole: ours, our parent's, each excluded pid's."""
    groups = {os.getpgrp(), 0, 1}
    for pid in (*protected, os.getppid()):
        info = _stat(pid)
        if info is not None:
            groups.add(info[2])
    return groups


def _signal(pids: Iterable[int], sig: signal.Signals, groups_spared: set[int]) -> None:
    for pid in pids:
        info = _stat(pid)
        if info is not None and info[2] not in groups_spared:
            with contextlib.suppress(OSError):
                os.killpg(info[2], sig)
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def _reaped(pid: int) -> bool:
    """Reap ``pid`` if it has ended: True once it is no child of ours any more."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid


def _wait_reaped(pids: list[int], timeout: float) -> list[int]:
    """Reap what ends within ``timeout``; the pids still running."""
    deadline = time.monotonic() + timeout
    left = [pid for pid in pids if not _reaped(pid)]
    while left and time.monotonic() < deadline:
        time.sleep(0.01)
        left = [pid for pid in left if not _reaped(pid)]
    return left


def reap_survivors(exclude: Set[int] = frozenset(), grace_s: float = 0.5) -> list[Survivor]:
    """Stop and reap every child of this process not in ``exclude``: SIGTERM to its process
    group and to it, ``grace_s`` to end, then SIGKILL; repeated while children keep
    appearing (a killed survivor's own children are reparented to us), at most
    ``MAX_ROUNDS`` rounds. Returns the survivors found alive: zombies and processes
    already exiting are reaped but not reported; one that outlasts SIGKILL by
    ``KILL_WAIT_S`` (stuck in the kernel) is reported and left, not waited on again.

    Never signals a pid in ``exclude``, this process, or a group one of them (or our
    parent) belongs to. Useful after ``become_subreaper()``: orphans are our children then.
    """
    me = os.getpid()
    protected = {*exclude, me}
    spared = _protected_groups(protected)
    found: dict[int, Survivor] = {}
    for _ in range(MAX_ROUNDS):
        children = [pid for pid in children_of(me) if pid not in protected]
        if not children:
            break
        alive = [pid for pid in children if not _reaped(pid)]  # zombies: reaped, no more
        for pid in alive:
            if not _dying(pid):
                found.setdefault(pid, Survivor(pid, _cmdline(pid)))
        if not alive:
            continue
        _signal(alive, signal.SIGTERM, spared)
        left = _wait_reaped(alive, grace_s)
        if left:
            _signal(left, signal.SIGKILL, spared)
            protected.update(_wait_reaped(left, KILL_WAIT_S))  # unkillable now (state D)
    return list(found.values())
