"""Who a process is, and whether it is still that process: pid, start time and host.

A pid alone is not a process: the kernel reuses pids. The start time (``/proc/<pid>/stat``
field 22, clock ticks since boot) names the process, so a record whose process died and
whose pid now belongs to something else reads as ``gone``, never as alive. The fields are
read after the *last* ``)``: the command name (field 2) may hold spaces and parentheses.
A process on another host cannot be checked from here: it is ``elsewhere``.

Every running state uh records (``verify``, ``mission run``, run-all, ``harness run``) names
its owner this way; the registrations of ``uh_core.runtime.active`` do too. ``Probe`` answers
for one look at the workspace, asking ``/proc`` once per process.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

State = Literal["running", "gone", "elsewhere"]


def stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (field 3, the state, first)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    parts = stat.rsplit(")", 1)
    return parts[1].split() if len(parts) == 2 else None


def start_time(pid: int) -> int | None:
    """Field 22 of ``/proc/<pid>/stat`` (starttime); None where /proc cannot say."""
    fields = stat_fields(pid)
    try:
        return int(fields[19]) if fields is not None else None
    except (IndexError, ValueError):
        return None


def parent(pid: int) -> int | None:
    """Field 4 of ``/proc/<pid>/stat`` (ppid); None where /proc cannot say."""
    fields = stat_fields(pid)
    try:
        return int(fields[1]) if fields is not None else None
    except (IndexError, ValueError):
        return None


def host() -> str:
    return socket.gethostname()


@dataclass(frozen=True)
class Identity:
    pid: int
    start_time: int | None
    host: str


_current: Identity | None = None


def current() -> Identity:
    """This process (read once per process; a fork reads again)."""
    global _current
    pid = os.getpid()
    if _current is None or _current.pid != pid:
        _current = Identity(pid, start_time(pid), host())
    return _current


def process_state(pid: int, started: int | None, on_host: str | None = None) -> State:
    """``running`` when ``pid`` is still the process that was recorded (same start time, not
    a zombie); ``elsewhere`` when it was recorded on another host (nothing here can tell)."""
    if on_host and on_host != host():
        return "elsewhere"
    if pid <= 0:
        return "gone"
    fields = stat_fields(pid)
    if fields is None:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return "gone"
        except PermissionError:
            return "running"
        except OSError:
            return "gone"
        return "running" if started is None else "gone"
    if fields[0] in ("Z", "X", "x"):
        return "gone"
    if started is not None:
        try:
            if int(fields[19]) != started:
                return "gone"  # the pid was reused
        except (IndexError, ValueError):
            return "gone"
    return "running"


class Probe:
    """Liveness answers for one look (one refresh of the dashboard, one command): each
    process is asked of ``/proc`` once, however many states name it."""

    def __init__(self) -> None:
        self._answers: dict[tuple[int, int | None, str | None], State] = {}

    def state(self, pid: int, started: int | None, on_host: str | None = None) -> State:
        key = (pid, started, on_host)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = process_state(pid, started, on_host)
        return answer


def pids() -> list[int]:
    """Every pid in ``/proc`` now (this pid namespace's view)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    return sorted(int(name) for name in names if name.isdigit())


def cwd(pid: int) -> str | None:
    """Where ``pid`` works (``/proc/<pid>/cwd``); None when gone or not ours to read."""
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None


def environ(pid: int, name: str) -> str | None:
    """One variable of ``pid``'s environment as it started; None when absent or unreadable."""
    try:
        data = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    prefix = name.encode() + b"="
    for item in data.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode("utf-8", errors="replace")
    return None


def cmdline(pid: int, limit: int = 200) -> str:
    """``pid``'s command line as one line, cut to ``limit`` characters."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    text = raw.replace(b"\0", b" ").decode("utf-8", errors="replace").strip() or "?"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def ancestors(pid: int) -> set[int]:
    """``pid`` and every process above it (stops at 1, or where /proc cannot say)."""
    found: set[int] = set()
    while pid > 0 and pid not in found:
        found.add(pid)
        up = parent(pid)
        if up is None:
            break
        pid = up
    return found
