"""A first read at scale on two cores: a forked helper fills the derived index beside us.

A script's first ``status --json`` or ``mission list`` over a thousand missions and two
thousand ledgers that no index knows yet derives every row from its files: seconds of
parsing on one core. When this process is single-threaded and the machine has a second
core, ``share`` forks one helper. Both take keys (mission ids) from one shared counter, so
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
import mmap
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


class _Counter:
    """The next key's number, shared by both processes (anonymous shared memory), taken
    under a lock that is a pipe holding one token byte (read: take it; write: give back)."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.memory = mmap.mmap(-1, 8)  # MAP_SHARED: the child sees the same page
        self.lock_r, self.lock_w = os.pipe()
        os.write(self.lock_w, b"t")

    def take(self) -> int | None:
        os.read(self.lock_r, 1)
        try:
            (n,) = struct.unpack_from("q", self.memory, 0)
            if n >= self.total:
                return None
            struct.pack_into("q", self.memory, 0, n + 1)
            return int(n)
        finally:
            os.write(self.lock_w, b"t")

    def close(self) -> None:
        for fd in (self.lock_r, self.lock_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.memory.close()


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
    counter = _Counter(len(keys))
    parent = os.getpid()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # nothing buffered is written twice
    pid = os.fork()
    if pid == 0:  # the helper
        _helper(keys, counter, helper, parent)
    done: list[str] = []
    finished = False
    try:
        while (n := counter.take()) is not None:
            ours(keys[n])
            done.append(keys[n])
        finished = True
    finally:
        if not finished:  # interrupted, or failed: the helper's work is not wanted
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        counter.close()
    return done


def _helper(
    keys: Sequence[str], counter: _Counter, make: Callable[[], Helper], parent: int
) -> None:
    code = 1
    try:
        worker = make()
        worker.first()
        while os.getppid() == parent and (n := counter.take()) is not None:
            worker.derive(keys[n])
        worker.close()
        code = 0
    except BaseException:  # a helper's failure is only work not done
        pass
    finally:
        os._exit(code)
