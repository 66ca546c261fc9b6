"""The one append-only NDJSON writer (contract §8).

Each event is one whole line written with a single ``os.write`` on an ``O_APPEND``
descriptor while holding an exclusive ``flock`` on that file, so writers in several
processes never interleave. A writer that finds the file not ending in ``\\n`` (a crash
mid-write) starts a new line first, so a torn line never swallows the next event.

``EventLog`` keeps its descriptor open between events (opening and closing the file for
every line was most of an append's cost); the lock is still taken for each line, and under
it the writer checks that the path still names the file it holds: a log that was replaced,
rotated or deleted is reopened, so events always land in the file at the path.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from pathlib import Path
from types import TracebackType

from uh_core.clock import timestamp
from uh_core.errors import EventLogError
from uh_core.models.events import BaseEvent

_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
_REOPENS = 3  # the path changed under us this many times in a row: write to the latest


def encode_event(event: BaseEvent) -> bytes:
    """One compact JSON line (UTF-8, fields in declared order). An event without a
    timestamp is given one: the caller's object is stamped, so what it holds is what was
    written."""
    if not event.timestamp:
        event.timestamp = timestamp()
    return event.model_dump_json().encode("utf-8") + b"\n"


def _check_line(path: Path, line: bytes) -> None:
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        raise EventLogError(f"{path}: refusing to append a value that is not one line")


def _open(path: Path) -> int:
    try:
        try:
            return os.open(path, _FLAGS, 0o666)
        except FileNotFoundError:  # first event: create the folders (rare, so not up front)
            path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(path, _FLAGS, 0o666)
    except OSError as exc:
        raise EventLogError(f"{path}: cannot open event log: {exc.strerror}") from None


def _write_locked(fd: int, size: int, line: bytes, ends_whole: bool = False) -> int:
    """Write ``line`` at the end of ``fd`` (``size`` bytes long), whose lock we hold; the
    file's size after it. ``ends_whole``: the caller knows the last byte is a newline (it
    wrote it, and nobody wrote since), so it need not be read."""
    if size and not ends_whole and os.pread(fd, 1, size - 1) != b"\n":
        line = b"\n" + line
    view = memoryview(line)
    while view:
        written = os.write(fd, view)
        view = view[written:]
    return size + len(line)


def append_line(path: Path, line: bytes) -> None:
    """Append one ``\\n``-terminated line atomically with respect to other writers."""
    _check_line(path, line)
    fd = _open(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _write_locked(fd, os.fstat(fd).st_size, line)
    except OSError as exc:
        raise EventLogError(f"{path}: cannot append event: {exc.strerror}") from None
    finally:
        os.close(fd)  # closing releases the lock


def append_event(path: Path, event: BaseEvent) -> BaseEvent:
    append_line(path, encode_event(event))
    return event


class EventLog:
    """Appends events to one file, stamping mission and run ids on each.

    The descriptor is opened at the first event and kept until ``close()`` (or the end of
    a ``with`` block); emitting after ``close()`` opens it again. Safe to share between
    threads.
    """

    def __init__(self, path: Path, *, mission_id: str | None = None, run_id: str | None = None):
        self.path = path
        self.mission_id = mission_id
        self.run_id = run_id
        self._fd: int | None = None
        self._end = -1  # the size of the held file right after our last line
        self._mutex = threading.Lock()  # one flock per descriptor: threads take turns

    def emit(self, event: BaseEvent) -> BaseEvent:
        if event.mission_id is None:
            event.mission_id = self.mission_id
        if event.run_id is None:
            event.run_id = self.run_id
        self.append_line(encode_event(event))  # stamps the time when the event has none
        return event

    def append_line(self, line: bytes) -> None:
        """``append_line`` on the held descriptor (reopened if the path changed)."""
        _check_line(self.path, line)
        with self._mutex:
            for attempt in range(_REOPENS + 1):
                if self._fd is None:
                    self._fd = _open(self.path)
                fd = self._fd
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    try:
                        held = os.fstat(fd)
                        if attempt < _REOPENS and not _names(self.path, held):
                            self._close_locked()
                            continue
                        # Nobody wrote since our last line ended at this size: skip the read.
                        whole = held.st_size == self._end
                        self._end = _write_locked(fd, held.st_size, line, whole)
                        return
                    finally:
                        if self._fd is not None:
                            fcntl.flock(fd, fcntl.LOCK_UN)
                except OSError as exc:
                    self._close_locked()
                    raise EventLogError(
                        f"{self.path}: cannot append event: {exc.strerror}"
                    ) from None

    def _close_locked(self) -> None:
        fd, self._fd = self._fd, None
        self._end = -1
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)  # releases the lock too

    def close(self) -> None:
        with self._mutex:
            self._close_locked()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self._close_locked()


def _names(path: Path, held: os.stat_result) -> bool:
    """Does ``path`` still name the file ``held`` describes?"""
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    return (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino)
