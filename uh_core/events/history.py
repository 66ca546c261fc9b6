"""Folding a long history at the speed of the disk (docs/performance.md).

A long run's log is mostly ``runtime.progress`` lines, and of a run of consecutive progress
lines a fold keeps only, per (run, runtime), the last one's time and the last message that
said something. So a history is folded line by line except such runs: a line in the shape
uh's own writer gives a progress event (``{"event":"runtime.progress",`` … ``"run_id":…,
"runtime":"…"`` … ``}``) is grouped by that key without being decoded, and of each group only
the last line and the last line with a non-blank message are decoded, validated and folded,
in their order. Every other line — any other event, another writer's spelling, anything the
shape test is unsure of — is parsed and validated as before. The lines passed over are
counted as events; they are not checked one by one for being well-formed JSON (the live
tail, and every reader outside the history fold, still are).

``uh_core.events.block`` does the same on a whole block of bytes without a Python step per
line.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from uh_core.events.reader import parse_event
from uh_core.models.events import BaseEvent

PROGRESS = b'{"event":"runtime.progress",'
_RUN = b',"run_id":'
KIND = b',"kind":'


def _key(line: bytes) -> bytes | None:
    """``,"run_id":…,"runtime":"…"`` as written by uh (None: not sure, decode the line)."""
    start = line.find(_RUN, len(PROGRESS))
    end = line.find(KIND, start) if start >= 0 else -1
    if end < 0:
        return None
    key = line[start:end]
    return None if b"\\" in key or not key.endswith(b'"') else key


class Folding(Protocol):
    """What ``fold_lines`` folds into: ``apply`` each event (and, when it has one,
    ``skipped(n)`` is told of the lines passed over)."""

    def apply(self, event: BaseEvent) -> None: ...


def said_something(event: BaseEvent | None) -> bool:
    message = getattr(event, "message", None)
    return isinstance(message, str) and bool(message.strip())


def _chosen(batch: list[bytes]) -> list[tuple[int, BaseEvent | None]]:
    """The lines of a run of progress lines to fold, decoded, in order: per key the last
    line and the last line whose message is not blank (as the fold judges it); every line
    whose key is unsure. Going backwards, a line is decoded only while its key still needs
    one of the two."""
    chosen: list[tuple[int, BaseEvent | None]] = []
    last: set[bytes] = set()
    said: set[bytes] = set()
    for n in range(len(batch) - 1, -1, -1):
        key = _key(batch[n])
        if key is not None and key in said:
            continue
        event = parse_event(batch[n])
        if key is None:
            chosen.append((n, event))
        elif key not in last:
            last.add(key)
            chosen.append((n, event))
            if said_something(event):
                said.add(key)
        elif said_something(event):
            said.add(key)
            chosen.append((n, event))
    chosen.reverse()
    return chosen


def fold_lines(lines: Iterable[bytes], fold: Folding) -> tuple[int, int]:
    """Fold ``lines`` (without their newlines) in order: (events, malformed lines)."""
    apply = fold.apply
    skipped = getattr(fold, "skipped", None)
    events = malformed = 0
    batch: list[bytes] = []

    def flush() -> None:
        nonlocal events, malformed
        keep = _chosen(batch)
        for _n, event in keep:
            if event is None:
                malformed += 1
            else:
                apply(event)
                events += 1
        passed = len(batch) - len(keep)
        if passed and skipped is not None:
            skipped(passed)
        events += passed
        batch.clear()

    for line in lines:
        if line.startswith(PROGRESS) and line.endswith(b"}"):
            batch.append(line)
            continue
        if batch:
            flush()
        event = parse_event(line)
        if event is None:
            malformed += 1
        else:
            apply(event)
            events += 1
    if batch:
        flush()
    return events, malformed
