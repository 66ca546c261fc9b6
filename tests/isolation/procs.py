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


FAMILY_VAR = "UH_TEST_FAMILY"


def family(marker: str) -> list[int]:
    """Pids of live processes carrying ``marker``: as an argument of ``respawner.py``, or in
    their environment (``UH_TEST_FAMILY``, which every descendant inherits). Newest pids
    first: a racing family's live member is the newest, and the rest may be zombies."""
    wanted_env = f"{FAMILY_VAR}={marker}".encode()
    found = []
    for pid in sorted((int(name) for name in os.listdir("/proc") if name.isdigit()), reverse=True):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
            if args == [b""]:
                continue  # a zombie, or a kernel thread
            mine = marker.encode() in args and any(a.endswith(b"respawner.py") for a in args)
            if not mine:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    mine = wanted_env in handle.read().split(b"\0")
        except OSError:
            continue
        if mine:
            found.append(pid)
    return found


def kill_family(markers: list[str], timeout: float = 20.0) -> None:
    """Stop, then SIGKILL, every process of each family until none is left (test cleanup:
    a fork racer that reached init is caught by stopping it first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = [pid for marker in markers for pid in family(marker)]
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, sig)
        time.sleep(0.01)
