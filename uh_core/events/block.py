"""Folding a block of a long history without a Python step per line (docs/performance.md).

``uh_core.events.history.fold_lines`` decodes, of a run of progress lines, only those the
fold keeps (per run and runtime: the last line and the last one whose message says
something), but it still looks at every line in Python: about 3 µs a line, 3 s for a
million. ``fold_block`` takes the bytes of many lines at once and leaves the looking to
``bytes.count``, ``bytes.rfind`` and one regular expression, all in C:

- one scan (``_others``) finds every line that is *not* a progress line in uh's own
  spelling (its writer's field order, nothing escaped) with one of the keys already known;
  those lines, few in a long run's log, are folded one by one by ``fold_lines``;
- a count of ``}\\n`` against the newlines tells whether any line does not end in ``}``;
- between those lines every line has a known key, so per key ``rfind`` goes back from the
  end to its last line and its last line that says something, and only those are decoded.

Keys are learnt as they appear (a new run, another runtime) and the scan is repeated when
many lines of a block had a key not yet known. The result is always ``fold_lines``' (a
property test holds the two to the event-by-event fold).
"""

from __future__ import annotations

import functools
import re

from uh_core.events.history import KIND, Folding, fold_lines, said_something
from uh_core.events.reader import parse_event
from uh_core.models.events import BaseEvent

# The start of a progress line in uh's own spelling, up to where its key begins.
_HEAD = (
    rb'\{"event":"runtime\.progress","timestamp":"[^"\\\n]*",'
    rb'"mission_id":(?:"[^"\\\n]*"|null)'
)
# Its key, exactly what ``history._key`` reads: from ``,"run_id":`` to ``,"kind":``.
_KEY = rb'(,"run_id":(?:"[^"\\\n]*"|null),"runtime":"[^"\\\n]*"),"kind":'
_OWN = re.compile(_HEAD + _KEY)  # matched at a line's start
_UNCLOSED = re.compile(rb"(?<!\})\n")  # the end of a line that does not end in "}"
KEYS = 16  # keys carried from one block to the next; a new one is learnt when it shows
RESCAN = 64  # lines of a block with a newly learnt key that make it worth scanning again


@functools.lru_cache(maxsize=64)
def _others(keys: frozenset[bytes]) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """Found after each newline, and matched at the block's start: a line that is not an
    own-spelling progress line with a key among ``keys``."""
    known = b"|".join(re.escape(key) for key in sorted(keys)) or rb"(?!)"
    shape = rb"(?!" + _HEAD + rb"(?:" + known + rb")" + KIND + rb")"
    return re.compile(rb"\n" + shape), re.compile(shape)


def fold_block(data: bytes, fold: Folding, keys: set[bytes] | None = None) -> tuple[int, int]:
    """Fold ``data`` (complete lines, each ending in a newline, as ``LogTail.block`` gives
    them) exactly as ``fold_lines`` folds its non-blank lines: (events, malformed).

    ``keys``, when given, are the keys the previous block had; they are updated to this
    block's, so a caller folding a log block by block passes the same set each time."""
    if not data:
        return 0, 0
    known: set[bytes] = set(keys) if keys else set()
    odd = _scan(data, known)
    lines = data.count(b"\n")
    if data.count(b"}\n") != lines:
        for m in _UNCLOSED.finditer(data):  # some line does not end in "}"
            odd.add(data.rfind(b"\n", 0, m.start()) + 1)
    events = malformed = chosen = 0
    seen: set[bytes] = set()
    pos = 0
    for start in sorted(odd):
        if start > pos:
            picked = _fold_run(data, pos, start, known, seen, fold)
            events, malformed, chosen = (
                events + picked[0],
                malformed + picked[1],
                chosen + picked[2],
            )
        stop = data.index(b"\n", start)
        line = data[start:stop]
        lines -= 1
        if line.strip():
            own = _OWN.match(data, start)
            if own is not None:
                seen.add(own.group(1))
            folded, bad = fold_lines([line], fold)
            events, malformed = events + folded, malformed + bad
        pos = stop + 1
    if pos < len(data):
        picked = _fold_run(data, pos, len(data), known, seen, fold)
        events, malformed, chosen = events + picked[0], malformed + picked[1], chosen + picked[2]
    passed = lines - chosen  # the lines of the runs not decoded
    skipped = getattr(fold, "skipped", None)
    if passed and skipped is not None:
        skipped(passed)
    if keys is not None:
        keys.clear()
        keys.update(sorted(seen)[:KEYS])
    return events + passed, malformed


def _scan(data: bytes, known: set[bytes]) -> set[int]:
    """The starts of the lines not in a known key's shape; keys learnt on the way."""
    while True:
        after, first = _others(frozenset(known))
        odd = {m.start() + 1 for m in after.finditer(data)}
        odd.discard(len(data))
        if first.match(data) is not None:
            odd.add(0)
        learnt: dict[bytes, int] = {}
        for start in odd:
            own = _OWN.match(data, start)
            if own is not None:
                learnt[own.group(1)] = learnt.get(own.group(1), 0) + 1
        if sum(learnt.values()) < RESCAN or len(known) >= KEYS:
            return odd
        known.update(sorted(learnt, key=learnt.__getitem__, reverse=True)[: KEYS - len(known)])


def _fold_run(
    data: bytes, pos: int, end: int, keys: set[bytes], seen: set[bytes], fold: Folding
) -> tuple[int, int, int]:
    """Fold ``data[pos:end]``: progress lines in uh's spelling, each with a key in ``keys``.
    Returns (events, malformed) of the lines decoded, and how many lines were decoded."""
    chosen: list[tuple[int, BaseEvent | None]] = []
    for key in keys:
        picked = _picked(data, pos, end, key)
        if picked is None:  # a key inside a line, not at its place: line by line
            lines = data[pos : end - 1].split(b"\n")
            folded, bad = fold_lines(lines, fold)
            return folded, bad, len(lines)
        if picked:
            seen.add(key)
        chosen += picked
    chosen.sort(key=lambda item: item[0])
    events = malformed = 0
    for _at, event in chosen:
        if event is None:
            malformed += 1
        else:
            fold.apply(event)
            events += 1
    return events, malformed, len(chosen)


def _picked(
    data: bytes, pos: int, end: int, key: bytes
) -> list[tuple[int, BaseEvent | None]] | None:
    """Of the lines in ``data[pos:end]`` with ``key``: the last, and the last whose message
    says something (as ``history._chosen`` picks them), with their starts. None: ``key``
    was found inside a line rather than at its place."""
    needle = key + KIND
    picked: list[tuple[int, BaseEvent | None]] = []
    while True:
        at = data.rfind(needle, pos, end)
        if at < 0:
            return picked
        start = max(data.rfind(b"\n", pos, at) + 1, pos)
        own = _OWN.match(data, start)
        if own is None or own.start(1) != at:
            return None
        event = parse_event(data[start : data.index(b"\n", at)])
        said = said_something(event)
        if not picked or said:
            picked.append((start, event))
        if said:
            return picked
        end = start
