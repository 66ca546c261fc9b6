"""The one append-only NDJSON writer (contract §8).

Each event is one whole line written with a single ``os.write`` on an ``O_APPEND``
descriptor while holding an exclusive ``flock`` on that file, so writers in several
processes never interleave. A writer that finds the file not ending in ``\\n`` (a crash
mid-write) starts a new line first, so a torn line never swallows the next event.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from uh_core.clock import timestamp
from uh_core.errors import EventLogError
from uh_core.models.events import BaseEvent

_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC


def encode_event(event: BaseEvent) -> bytes:
    data: dict[str, Any] = event.model_dump(mode="json")
    if not data.get("timestamp"):
        data["timestamp"] = timestamp()
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8") + b"\n"


def append_line(path: Path, line: bytes) -> None:
    """Append one ``\\n``-terminated line atomically with respect to other writers."""
    if not line.endswith(b"\n") or b"\n" in line[:-1]:
        raise EventLogError(f"{path}: refusing to append a value that is not one line")
    try:
        try:
            fd = os.open(path, _FLAGS, 0o644)
        except FileNotFoundError:  # first event: create the folders (rare, so not up front)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, _FLAGS, 0o644)
    except OSError as exc:
        raise EventLogError(f"{path}: cannot open event log: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        view = memoryview(line)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError as exc:
        raise EventLogError(f"{path}: cannot append event: {exc.strerror}") from None
    finally:
        os.close(fd)  # closing releases the lock


def append_event(path: Path, event: BaseEvent) -> BaseEvent:
    append_line(path, encode_event(event))
    return event


class EventLog:
    """Appends events to one file, stamping mission and run ids on each."""

    def __init__(self, path: Path, *, mission_id: str | None = None, run_id: str | None = None):
        self.path = path
        self.mission_id = mission_id
        self.run_id = run_id

    def emit(self, event: BaseEvent) -> BaseEvent:
        if event.mission_id is None:
            event.mission_id = self.mission_id
        if event.run_id is None:
            event.run_id = self.run_id
        if not event.timestamp:
            event.timestamp = timestamp()
        return append_event(self.path, event)
