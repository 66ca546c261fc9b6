"""Stopping a whole process group: each signal, a grace period, then SIGKILL."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence

DEFAULT_GRACE_S = 2.0


def _group_has_live_members(pgid: int) -> bool:
    return _live_members(pgid) != []


def _live_members(pgid: int) -> list[int] | None:
    """The group's members that are not zombies: ``[]`` when none, ``None`` when they cannot
    be listed (a member of another user's, or ``/proc`` unreadable): alive, unknown who."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    except PermissionError:
        return None
    # Members may be zombies waiting for a reaper that is not us; those are harmless.
    members: list[int] = []
    try:
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != b"Z":
                members.append(int(entry.name))
    except OSError:
        return None
    return members


def _all_ignore(pids: list[int], sig: signal.Signals) -> bool:
    """Every one of ``pids`` ignores ``sig`` (``SigIgn`` in its status): waiting for it to
    act is waiting for nothing. A background job of a non-interactive shell ignores SIGINT,
    so a script that left one would otherwise hold every cancel for the whole grace."""
    bit = 1 << (int(sig) - 1)
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status", "rb") as handle:
                line = next((x for x in handle if x.startswith(b"SigIgn:")), None)
        except OSError:
            continue  # gone meanwhile
        if line is None or not int(line.split()[1], 16) & bit:
            return False
    return True


def stop_group(
    pgid: int,
    grace: float = DEFAULT_GRACE_S,
    signals: Sequence[signal.Signals] = (signal.SIGTERM,),
    pause: Callable[[float], object] = time.sleep,
) -> bool:
    """Send each of ``signals`` to the group, waiting ``grace`` after each, then SIGKILL.

    True if anything was alive. Agents that save partial state on SIGINT get
    ``signals=(SIGINT, SIGTERM)``. When every live member ignores a signal that is not the
    last, its grace is not waited out: the next signal goes at once. The last one always gets
    its whole grace before SIGKILL. ``pause`` waits between looks (lazy logs drain their
    pipes meanwhile, so a process printing as it dies is not blocked on a full pipe).
    """
    if not _group_has_live_members(pgid):
        return False
    for index, sig in enumerate(signals):
        last = index == len(signals) - 1
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            members = _live_members(pgid)
            if members == []:
                return True
            if not last and members and _all_ignore(members, sig):
                break  # none of them will act on it: the next polite signal now
            pause(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    return True
