"""Stopping a whole process group: each signal, a grace period, then SIGKILL."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence

DEFAULT_GRACE_S = 2.0


def _group_has_live_members(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Members may be zombies waiting for a reaper that is not us; those are harmless.
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
                return True
    except OSError:
        return True
    return False


def stop_group(
    pgid: int,
    grace: float = DEFAULT_GRACE_S,
    signals: Sequence[signal.Signals] = (signal.SIGTERM,),
    pause: Callable[[float], object] = time.sleep,
) -> bool:
    """Send each of ``signals`` to the group, waiting ``grace`` after each, then SIGKILL.

    True if anything was alive. Agents that save partial state on SIGINT get
    ``signals=(SIGINT, SIGTERM)``. ``pause`` waits between looks (lazy logs drain their
    pipes meanwhile, so a process printing as it dies is not blocked on a full pipe).
    """
    if not _group_has_live_members(pgid):
        return False
    for sig in signals:
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not _group_has_live_members(pgid):
                return True
            pause(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    return True
