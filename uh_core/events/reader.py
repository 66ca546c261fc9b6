"""Reading event logs: parse tolerant of other writers, and tail by byte offset.

A line is consumed only once its ``\\n`` is on disk; malformed lines are skipped and
counted; a file that was replaced (new inode) or truncated is read again from the start.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic

from uh_core.models.events import KNOWN_EVENT_ADAPTER, KNOWN_TYPES, BaseEvent, UnknownEvent

_TYPE_KEYS = ("type", "kind")
_TIME_KEYS = ("ts", "time", "at")
_FINGERPRINT = 256  # enough to reach the run id of our own first line
_CHUNK = 1 << 20


def normalise(data: dict[str, Any]) -> dict[str, Any] | None:
    """Map the TypeScript uh's spellings onto ours; None when there is no event type."""
    if not isinstance(data.get("event"), str):
        for key in _TYPE_KEYS:
            if isinstance(data.get(key), str):
                data = dict(data)
                data["event"] = data.pop(key)
                break
        else:
            return None
    if "timestamp" not in data:
        for key in _TIME_KEYS:
            if key in data:
                data = dict(data)
                data["timestamp"] = str(data.pop(key))
                break
    return data


def parse_event(line: bytes | str) -> BaseEvent | None:
    """One line to an event, or None when it is not a JSON object with an event type."""
    try:
        # Strict UTF-8: json.loads on bytes would also accept UTF-16/32 and lone surrogates.
        data = json.loads(line.decode("utf-8") if isinstance(line, bytes) else line)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    if not isinstance(data, dict):
        return None
    normalised = normalise(data)
    if normalised is None:
        return None
    if normalised["event"] in KNOWN_TYPES:
        try:
            event: BaseEvent = KNOWN_EVENT_ADAPTER.validate_python(normalised)
            return event
        except pydantic.ValidationError:
            pass  # a foreign payload under a shared name: keep it, untyped
    try:
        return UnknownEvent.model_validate(normalised)
    except pydantic.ValidationError:
        return None


@dataclass
class LogTail:
    """Follows one log file by byte offset. ``poll()`` returns the events appended since."""

    path: Path
    offset: int = 0
    malformed: int = 0
    resets: int = 0
    _identity: tuple[int, int] | None = None
    _fingerprint: bytes = b""

    def _restart(self) -> None:
        self.offset = 0
        self._fingerprint = b""  # the old file's first bytes say nothing about the new one
        self.resets += 1

    def poll(self, max_bytes: int | None = None) -> list[BaseEvent]:
        return list(self.iter_new(max_bytes))

    def iter_new(self, max_bytes: int | None = None) -> Iterator[BaseEvent]:
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - closed by the with below
        except FileNotFoundError:
            return
        with handle:
            stat = os.fstat(handle.fileno())
            identity = (stat.st_dev, stat.st_ino)
            if (
                self._identity is not None and identity != self._identity
            ) or stat.st_size < self.offset:
                self._restart()
            elif self.offset and self._fingerprint:
                head = os.pread(handle.fileno(), len(self._fingerprint), 0)
                if head != self._fingerprint:
                    self._restart()
            self._identity = identity
            budget = stat.st_size - self.offset
            if max_bytes is not None:
                budget = min(budget, max_bytes)
            handle.seek(self.offset)
            carry = b""
            while budget > 0:
                chunk = handle.read(min(_CHUNK, budget))
                if not chunk:
                    break
                budget -= len(chunk)
                data = carry + chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry = data
                    continue
                carry = data[cut + 1 :]
                consumed = data[: cut + 1]
                if self.offset == 0 and not self._fingerprint:
                    self._fingerprint = consumed[:_FINGERPRINT]
                self.offset += len(consumed)
                for raw in consumed.split(b"\n")[:-1]:
                    if not raw.strip():
                        continue
                    event = parse_event(raw)
                    if event is None:
                        self.malformed += 1
                    else:
                        yield event


def read_events(path: Path) -> tuple[list[BaseEvent], int]:
    """Every complete event of ``path`` and how many malformed lines were skipped."""
    tail = LogTail(path)
    events = tail.poll()
    return events, tail.malformed
