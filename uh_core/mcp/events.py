"""``tail_events``: the logs ``uh-core tail`` reads, by byte offset from a cursor.

A cursor maps each log (``audit``, or a mission id) to the byte offset of the first line
not yet returned; the reader is ``uh_core.events.reader.LogTail``, the one ``tail`` and
the dashboard use. Events are read in bounded slices, so no answer holds a whole log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from uh_core.cli.tail_cmd import _sources
from uh_core.events.reader import LogTail, seen_before
from uh_core.layout import Layout

SLICE = 256 << 10  # bytes of one log read at a time


def _name(layout: Layout, path: Path) -> str:
    return "audit" if path == layout.audit_log else path.parent.name


def since(
    layout: Layout, mission_id: str | None, cursor: dict[str, int], limit: int
) -> dict[str, Any]:
    if mission_id is not None:
        from uh_core.missions import load_mission

        load_mission(layout, mission_id)  # unknown or invalid ids: the CLI's refusal
    found: list[tuple[str, Any]] = []
    next_cursor = dict(cursor)
    malformed = 0
    for path in _sources(layout, mission_id):
        name = _name(layout, path)
        offset = max(0, int(cursor.get(name, 0)))
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        tail = LogTail(path, offset=offset if offset <= size else 0)
        while len(found) < limit:
            batch = tail.poll(SLICE)
            if not batch:
                break
            found += [(name, event) for event in batch]
        malformed += tail.malformed
        next_cursor[name] = tail.offset
    found.sort(key=lambda item: item[1].timestamp)
    seen: set[str] = set()  # events written to two logs (promotion.*) are shown once
    shown = []
    for name, event in found:
        if seen_before(event, seen):
            continue
        shown.append({"log": name, **event.model_dump(mode="json")})
    return {"events": shown, "cursor": next_cursor, "malformed_lines": malformed}
