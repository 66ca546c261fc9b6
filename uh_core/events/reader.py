"""Reading event logs: parse tolerant of other writers, and tail by byte offset.

A line is consumed only once its ``\\n`` is on disk; malformed lines are skipped and
counted; a file that was replaced (new inode) or truncated is read again from the start.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pydantic

from uh_core.compat.ts import REWRITTEN_EVENTS
from uh_core.compat.ts import event as ts_event
from uh_core.follow import LineFollower
from uh_core.models.events import EVENT_TYPES, BaseEvent, UnknownEvent

_TYPE_KEYS = ("type", "kind")
_TIME_KEYS = ("ts", "time", "at")


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
    return ts_event(data)


# uh's writer puts the type first: ``{"event":"<name>",``. Such a line of a known type is
# validated from its bytes by pydantic-core's own parser (about two thirds of the time of
# json.loads and a dict's validation); the names whose TypeScript spellings ``normalise``
# rewrites, and any line that parser or the model refuses, take the general path, which
# decides as before.
_PREFIX = b'{"event":"'


def parse_event(line: bytes | str) -> BaseEvent | None:
    """One line to an event, or None when it is not a JSON object with an event type."""
    if isinstance(line, bytes) and line.startswith(_PREFIX):
        end = line.find(b'"', len(_PREFIX))
        # a name with an escape in it matches no known name: it takes the general path
        name = line[len(_PREFIX) : end].decode("latin-1") if end > 0 else ""
        model = EVENT_TYPES.get(name) if name not in REWRITTEN_EVENTS else None
        if model is not None:
            try:
                event = model.model_validate_json(line)
            except pydantic.ValidationError:  # not JSON to it (a lone surrogate), or not
                event = None  # this model: the general path says what it is
            # no ``timestamp``: normalise may find it under another spelling (``ts``)
            if event is not None and event.timestamp:
                return event
    return _parse_general(line)


def _parse_general(line: bytes | str) -> BaseEvent | None:
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
    model = EVENT_TYPES.get(normalised["event"])
    if model is not None:  # as the union's discriminator would, building only this model
        try:
            return model.model_validate(normalised)
        except pydantic.ValidationError:
            pass  # a foreign payload under a shared name: keep it, untyped
    try:
        return UnknownEvent.model_validate(normalised)
    except pydantic.ValidationError:
        return None


class LogTail:
    """Follows one event log by byte offset. ``poll()`` returns the events appended since.

    ``offset`` (a line boundary, e.g. from ``uh_core.follow.tail_start``) starts it part-way.
    """

    def __init__(self, path: Path, offset: int = 0) -> None:
        self.path = path
        self.malformed = 0
        self._lines = LineFollower(path, offset=offset)

    @property
    def offset(self) -> int:
        return self._lines.offset

    @property
    def resets(self) -> int:
        return self._lines.resets

    def raw(self, max_bytes: int | None = None) -> Iterator[bytes]:
        """The new complete lines, undecoded (``uh_core.events.history`` folds them)."""
        return self._lines.lines(max_bytes)

    def block(self, max_bytes: int | None = None) -> bytes:
        """The new complete lines as one block, each with its newline (``fold_block``)."""
        return self._lines.block(max_bytes)

    def poll(self, max_bytes: int | None = None) -> list[BaseEvent]:
        return list(self.iter_new(max_bytes))

    def iter_new(self, max_bytes: int | None = None) -> Iterator[BaseEvent]:
        for raw in self._lines.lines(max_bytes):
            event = parse_event(raw)
            if event is None:
                self.malformed += 1
            else:
                yield event


def seen_before(event: BaseEvent, seen: set[str]) -> bool:
    """Whether ``event`` was already seen by its ``event_id`` (a promotion is written to the
    mission's log and the audit log: readers of both show it once); notes it in ``seen``."""
    event_id = getattr(event, "event_id", None)
    if not isinstance(event_id, str) or not event_id:
        return False
    key = f"{event.event} {event_id}"
    if key in seen:
        return True
    seen.add(key)
    return False


def read_events(path: Path) -> tuple[list[BaseEvent], int]:
    """Every complete event of ``path`` and how many malformed lines were skipped."""
    tail = LogTail(path)
    events = tail.poll()
    return events, tail.malformed
