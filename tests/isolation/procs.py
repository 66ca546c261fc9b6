"""Finding the processes a test started by a unique argument (``sleep 300.<digits>``).

Inside a PID namespace pids differ from ours, so tests find what is left by its command
line instead: every marker is an argument no other process on the machine has.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time


def new_marker() -> str:
    """A ``sleep`` duration no other process uses: ``300.<12 random digits>``."""
    return f"300.{secrets.randbelow(10**12):012d}"


def marked(marker: str) -> list[int]:
    """Pids of running ``sleep MARKER`` processes (zombies have no arguments any more)."""
    wanted = marker.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
        except OSError:
            continue
        if len(args) > 1 and os.path.basename(args[0]) == b"sleep" and args[1] == wanted:
            found.append(int(name))
    return found


def wait_until(markers: list[str], *, present: bool, timeout: float = 10.0) -> list[str]:
    """Wait until every marker is running (``present``) or none is; the markers still not
    there (or still there) when ``timeout`` ran out."""
    deadline = time.monotonic() + timeout
    while True:
        wrong = [m for m in markers if bool(marked(m)) != present]
        if not wrong or time.monotonic() > deadline:
            return wrong
        time.sleep(0.02)


def kill_marked(markers: list[str]) -> None:
    """SIGKILL whatever still runs with one of ``markers`` (test cleanup)."""
    for marker in markers:
        for pid in marked(marker):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
