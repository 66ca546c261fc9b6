"""Processes as the reaper sees them in ``/proc``: who each one is, whose child, whether it
runs, and a way to signal exactly that process.

A pid is not a process: once a process is reaped its pid can be given to another, and a
fork-racing survivor goes through pids fast (``pid_max`` may be 32768). So a process is
named by ``(pid, start time)`` (``Proc.key``), and a signal goes through a pidfd opened
*before* the identity is checked again (``pinned``): a pidfd names one process for good,
so the signal cannot reach a stranger that took the pid in between.

Two ways to find children: ``child_pids`` reads the kernel's own list
(``/proc/<pid>/task/<tid>/children``), fast enough to catch a child that lives for a
millisecond, but documented as possibly missing children while the list changes; ``table``
reads every ``/proc/<pid>/stat``, slower, and complete for processes that stay put.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from dataclasses import dataclass

Key = tuple[int, int]  # (pid, start time in clock ticks since boot)
PF_EXITING = 0x4  # task flag in /proc/<pid>/stat field 9


@dataclass(frozen=True)
class Proc:
    """One look at a process: ``/proc/<pid>/stat`` fields 3, 4, 5 and 22."""

    pid: int
    state: str
    ppid: int
    pgid: int
    start: int

    @property
    def key(self) -> Key:
        return (self.pid, self.start)

    @property
    def ended(self) -> bool:
        """A zombie (or dead): it runs no more, only its exit status waits to be reaped."""
        return self.state in ("Z", "X", "x")

    @property
    def stopped(self) -> bool:
        """Stopped by a signal, or in a tracing stop: it cannot fork until continued."""
        return self.state in ("T", "t")

    @property
    def waking(self) -> bool:
        """Running or asleep interruptibly: a pending SIGSTOP stops it very soon. Other live
        states (``D`` and the like) are inside the kernel; they are not waited for."""
        return self.state in ("R", "S")


def read(pid: int) -> Proc | None:
    """``pid`` as ``/proc`` shows it now; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    # comm (field 2) may hold spaces and parentheses: the fields start after the last ')'.
    fields = data.rsplit(b")", 1)[-1].split()
    try:
        state = fields[0].decode("ascii", "replace")
        return Proc(pid, state, int(fields[1]), int(fields[2]), int(fields[19]))
    except (IndexError, ValueError):
        return None


def all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def table() -> dict[int, list[Proc]]:
    """Every process in ``/proc`` now, by parent pid."""
    kids: dict[int, list[Proc]] = {}
    for pid in all_pids():
        proc = read(pid)
        if proc is not None:
            kids.setdefault(proc.ppid, []).append(proc)
    return kids


def child_pids(pid: int) -> list[int] | None:
    """The children of ``pid`` from the kernel's per-thread lists; None where the kernel
    keeps none (``CONFIG_PROC_CHILDREN`` off): the caller reads ``table`` instead."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", "rb") as handle:
                found += [int(word) for word in handle.read().split()]
        except FileNotFoundError:
            if not os.path.exists(f"/proc/{pid}/task/{task}"):
                continue  # the thread ended meanwhile
            return None
        except (OSError, ValueError):
            continue
    return found


@contextlib.contextmanager
def pinned(pid: int) -> Iterator[tuple[Proc, int | None] | None]:
    """``pid`` held by a pidfd while it is looked at and signalled: yields (the process as
    read once the pidfd was open, the pidfd), or None when it is gone. The pidfd is None
    where the kernel has none; ``send`` then falls back to ``kill``."""
    try:
        fd: int | None = os.pidfd_open(pid)
    except ProcessLookupError:
        yield None
        return
    except (OSError, AttributeError):
        fd = None
    try:
        proc = read(pid)
        yield None if proc is None else (proc, fd)
    finally:
        if fd is not None:
            os.close(fd)


def send(proc: Proc, fd: int | None, sig: signal.Signals) -> None:
    """Signal the process ``fd`` holds (``proc`` as read after opening it)."""
    with contextlib.suppress(OSError):
        if fd is not None:
            signal.pidfd_send_signal(fd, sig)
        else:
            now = read(proc.pid)
            if now is not None and now.key == proc.key:
                os.kill(proc.pid, sig)


def signal_key(key: Key, sig: signal.Signals) -> None:
    """Signal the process ``key`` names, if it still runs (never one that took its pid)."""
    with pinned(key[0]) as held:
        if held is not None and held[0].key == key and not held[0].ended:
            send(held[0], held[1], sig)


def _kill_pending(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"ShdPnd:"):
                    return bool(int(line.split()[1], 16) & 1 << (signal.SIGKILL - 1))
    except (OSError, IndexError, ValueError):
        pass
    return False


def dying(pid: int) -> bool:
    """Whether ``pid`` is already being torn down: SIGKILL pending, or every thread exiting
    (``PF_EXITING``) — e.g. bwrap's PID 1, killed as the bwrap it belonged to ended and
    reparented to us meanwhile. Such a process is stopped, not reported as a survivor."""
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


def namespace_init(pid: int) -> bool:
    """Whether ``pid`` is PID 1 of a PID namespace below ours (bwrap's, say)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"NSpid:"):
                    ids = line.split()[1:]
                    return len(ids) > 1 and ids[-1] == b"1"
    except OSError:
        pass
    return False
