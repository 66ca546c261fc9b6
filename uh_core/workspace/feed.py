"""One event log as a feed: opened at its end, followed by byte offset, folded from its start.

A 250 MB log must show its newest events at once, so a feed over ``big`` bytes starts where
its last ``tail_lines`` lines begin (``uh_core.follow.tail_start``: a backwards scan, no
parsing) and follows the log from there; the history before that point is folded after, a
bounded chunk at a time (``step_history``), so memory stays flat and no read blocks long.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from uh_core.events.block import fold_block
from uh_core.events.reader import LogTail
from uh_core.events.render import describe
from uh_core.follow import tail_start
from uh_core.models.events import BaseEvent
from uh_core.workspace.state import EventLine

TAIL_LINES = 500  # a big log is opened with this many of its last lines
BIG_LOG = 4 << 20  # logs larger than this open at their end; history is folded after
CHUNK = 1 << 20  # bytes read per step, so no single read blocks the reader for long
STEP_S = 0.05  # history folded per step_history(): new appends wait at most about this


class Fold(Protocol):
    def apply(self, event: BaseEvent) -> None: ...


F = TypeVar("F", bound=Fold)


class LogFeed(Generic[F]):
    """One event log: opened at its end, followed by offset, folded from its start.

    The fold must see every event in order, so while the history before the opening point
    is still being read (``catching_up``), newly appended events wait in ``pending``.
    """

    def __init__(
        self,
        path: Path,
        make_fold: Callable[[], F],
        *,
        tail_lines: int = TAIL_LINES,
        big: int = BIG_LOG,
        deferred: bool = False,
        size: int | None = None,
    ) -> None:
        self.path = path
        self._make_fold = make_fold
        self._tail_lines = tail_lines
        self._big = big
        self._open(deferred, size)

    def _open(self, deferred: bool = False, size: int | None = None) -> None:
        """``size``: the log's size as the caller saw it (a deferred feed opens there)."""
        self.fold = self._make_fold()
        if size is None:
            try:
                size = os.stat(self.path).st_size
            except OSError:
                size = 0
        if deferred:  # its row is known (the derived index): nothing read until it changes
            self.start = size
        else:
            self.start = tail_start(self.path, self._tail_lines) if size > self._big else 0
        self.deferred = deferred
        self.live = LogTail(self.path, self.start)
        self.history: LogTail | None = LogTail(self.path, 0) if self.start else None
        if deferred:
            self.history = None
        self.pending: list[BaseEvent] = []
        self.keys: set[bytes] = set()  # the progress keys of the last history block
        self.count = 0
        self.more = False  # bytes known to be waiting beyond the last read

    def undefer(self) -> None:
        """A deferred feed's fold is wanted (its log or files changed): fold the history
        before its opening point (``step_history``) as a big log's is; nothing is read twice."""
        if not self.deferred:
            return
        self.deferred = False
        self.start = self.live.offset
        self.history = LogTail(self.path, 0) if self.start else None

    @property
    def malformed(self) -> int:
        return self.live.malformed + (self.history.malformed if self.history else 0)

    @property
    def catching_up(self) -> float | None:
        if self.history is None:
            return None
        return self.history.offset / self.start if self.start else 1.0

    def poll(self) -> tuple[list[BaseEvent], bool]:
        """Events appended since the last poll (at most ``CHUNK`` bytes' worth), and
        whether the file was replaced or truncated (then it was opened again)."""
        size = _size(self.path)
        if self.deferred:
            if size == self.live.offset:
                return [], False  # unchanged (a replaced log changes its row's signature)
            self.undefer()
        before = self.live.offset
        resets = self.live.resets
        events = self.live.poll(CHUNK)
        reset = self.live.resets != resets
        if reset:
            self._open()
            size, before = _size(self.path), self.live.offset
            events = self.live.poll(CHUNK)
        if self.live.offset == before and size - before > CHUNK:
            events = self.live.poll()  # one line longer than CHUNK: read it whole
        self.more = size - before > CHUNK
        self.count += len(events)
        if self.history is None:
            for event in events:
                self.fold.apply(event)
        else:
            self.pending.extend(events)
        return events, reset

    def step_history(self, seconds: float = STEP_S) -> bool:
        """Fold history for about ``seconds`` (a chunk at a time, at least one); True while
        some remains."""
        deadline = time.monotonic() + seconds
        while self._fold_chunk():
            if time.monotonic() >= deadline:
                return True
        return False

    def _fold_chunk(self) -> bool:
        """Fold the next chunk of history; True while some remains."""
        if self.history is None:
            return False
        resets = self.history.resets
        before = self.history.offset
        budget = max(self.start - before, 0)
        block = self.history.block(min(CHUNK, budget)) if budget else b""
        if self.history.resets != resets:
            self._open()  # replaced under us: start over
            return self.history is not None
        if self.history.offset == before and budget:
            block = self.history.block(budget)  # a line longer than CHUNK
        folded, malformed = fold_block(block, self.fold, self.keys)
        self.history.malformed += malformed
        self.count += folded
        if self.history.offset >= self.start:
            for event in self.pending:
                self.fold.apply(event)
            self.pending = []
            self.history = None
            return False
        return True


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


_GOOD = {"passed", "succeeded", "pass", "agreement", "completed"}
_BAD = {"failed", "fail", "error", "divergent", "interrupted"}
_WARN = {"blocked", "cancelled", "skipped", "unobserved"}


def tone(event: BaseEvent) -> str:
    """good | bad | warn | live | "" — how an event line reads at a glance."""
    status = getattr(event, "status", None) or getattr(event, "outcome", None)
    if event.event == "harness.gate.checked":
        return "good" if getattr(event, "passed", False) else "bad"
    if isinstance(status, str):
        if status in _GOOD:
            return "good"
        if status in _BAD:
            return "bad"
        if status in _WARN:
            return "warn"
    if event.event.endswith(".started") or event.event == "runtime.progress":
        return "live"
    return ""


def event_line(event: BaseEvent, source: str) -> EventLine:
    """An event as one line of text (``uh-core tail``'s wording), with its source and tone."""
    text = " ".join(describe(event).split())
    return EventLine(event.timestamp, event.mission_id or source, event.event, text, tone(event))
