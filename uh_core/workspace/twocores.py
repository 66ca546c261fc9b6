"""A first read at scale on two cores: a forked helper fills the derived index beside us.

A script's first ``status --json`` or ``mission list`` over a thousand missions and two
thousand ledgers that no index knows yet derives every row from its files: seconds of
parsing on one core. When this process is single-threaded and the machine has a second
core, ``share`` forks one helper. Both take keys (mission ids) from one queue (a pipe), so
neither waits on the other's share; the helper first does its ``first`` work (the ledgers)
and stores everything it derives in the index (a connection of its own), as any reader
would. This process derives the keys it took, then waits for the helper, and reads the
helper's rows from the index in its usual pass: checked against the files' signatures and
validated, as every stored row is.

The helper never decides anything: a row it could not store (something runs, a file does
not read), a helper that died or was never started, and the reader derives that row itself,
exactly as without it. It ends when this process is interrupted or goes (it checks its
parent between keys), and leaves through ``os._exit``: no exit handler, no buffered output
of ours written twice. docs/performance.md, "A thousand missions".
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Protocol

MIN_KEYS = 128  # fewer rows to derive than this: not worth a process


class Helper(Protocol):
    def first(self) -> None: ...
    def derive(self, key: str) -> None: ...
    def close(self) -> None: ...


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def can_fork() -> bool:
    """Two cores, fork, and no other thread (a fork copies only the calling one)."""
    return hasattr(os, "fork") and cores() >= 2 and threading.active_count() == 1


class _Queue:
    """The keys' numbers in a pipe, written whole before the fork: each process reads one
    number at a time (a read of 4 bytes from a pipe is atomic), so no lock is held that a
    process could die holding. Beyond the pipe's capacity, keys are left to the reader's
    own pass (``full()`` derives what the index lacks)."""

    SIZE = 4

    def __init__(self, total: int) -> None:
        self.read_fd, self.write_fd = os.pipe()
        with contextlib.suppress(AttributeError, OSError):  # Linux: a larger pipe
            fcntl.fcntl(self.write_fd, fcntl.F_SETPIPE_SZ, 1 << 20)
        capacity = fcntl.fcntl(self.write_fd, fcntl.F_GETPIPE_SZ) if _GETPIPE else 1 << 16
        self.total = min(total, capacity // self.SIZE)
        os.write(self.write_fd, b"".join(struct.pack("<I", n) for n in range(self.total)))
        os.close(self.write_fd)  # written whole: an empty pipe now reads as the end

    def take(self) -> int | None:
        data = os.read(self.read_fd, self.SIZE)
        return struct.unpack("<I", data)[0] if len(data) == self.SIZE else None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.read_fd)


_GETPIPE = hasattr(fcntl, "F_GETPIPE_SZ")


def share(
    keys: Sequence[str],
    ours: Callable[[str], None],
    helper: Callable[[], Helper],
    *,
    min_keys: int = MIN_KEYS,
) -> list[str]:
    """Derive ``keys`` on two processes when it pays (else none here: returns []): ``ours``
    derives one key in this process; ``helper`` is built in the forked child, which runs its
    ``first()``, then ``derive``s the keys it takes, then ``close()``s (its index flushed).
    Returns the keys this process derived, after the helper has ended."""
    if len(keys) < min_keys or not can_fork():
        return []
    queue = _Queue(len(keys))
    parent = os.getpid()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # nothing buffered is written twice
    pid = os.fork()
    if pid == 0:  # the helper
        _helper(keys, queue, helper, parent)
    done: list[str] = []
    finished = False
    try:
        while (n := queue.take()) is not None:
            ours(keys[n])
            done.append(keys[n])
        finished = True
    finally:
        if not finished:  # interrupted, or failed: the helper's work is not wanted
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        queue.close()
    return done


def _helper(keys: Sequence[str], queue: _Queue, make: Callable[[], Helper], parent: int) -> None:
    code = 1
    try:
        worker = make()
        worker.first()
        while os.getppid() == parent and (n := queue.take()) is not None:
            worker.derive(keys[n])
        worker.close()
        code = 0
    except BaseException:  # a helper's failure is only work not done
        pass
    finally:
        os._exit(code)
