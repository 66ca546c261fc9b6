"""Mission rows by signature, from the derived index: a start folds no log it need not.

A mission's row (``MissionView``) is derived from its files and its event log's fold. When
nothing of it runs (no verify, run or harness attempt in progress, nothing interrupted, its
whole log folded), the row depends on those files alone: it is stored in the index under
their signatures (``inputs``). The next reader that finds the same signatures takes the row
as it is and opens the log at its end without reading it (``LogFeed(deferred=True)``); the
first new event, or any change to those files, folds the log from its start again and
derives the row as before.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pydantic

from uh_core.ids import check_id
from uh_core.layout import Layout
from uh_core.workspace.index import Index, stamp
from uh_core.workspace.state import MissionView

if TYPE_CHECKING:
    from pydantic import TypeAdapter

KIND = "mission"
_ADAPTER: TypeAdapter[MissionView] | None = None
_RUNNING = ("running", "parked")


def adapter() -> TypeAdapter[MissionView]:
    global _ADAPTER
    if _ADAPTER is None:
        _ADAPTER = pydantic.TypeAdapter(MissionView)
    return _ADAPTER


NAMES = (
    "mission.yaml",
    "verification.yaml",
    "runtime-comparison.json",
    "runtime-comparison.md",
    "promotion.yaml",
    "runs/index.json",
    "latest.json",
    "runtime-result.yaml",
    "events.ndjson",  # last: the store reads the log's mtime from a signature's last field
)


def inputs(layout: Layout, mission_id: str) -> list[str]:
    """Every file a mission's row is derived from (``mission_view`` and its readers), as
    strings: stat'ed for every mission on every refresh."""
    mdir = str(layout.mission_dir(mission_id))
    return [os.path.join(mdir, name) for name in NAMES]


_FIRST = tuple(name.split("/", 1)[0] for name in NAMES)  # what a listing of the folder shows


def listing(mdir: str) -> set[str]:
    """The names in a mission's folder (one listing): which of its inputs exist, and
    whether a run registered itself there (``active/``)."""
    try:
        return set(os.listdir(mdir))
    except OSError:
        return set()


def inputs_signature(layout: Layout, mission_id: str, present: set[str] | None = None) -> str:
    """``index.signature(inputs(...))``, from one listing of the mission's folder (``present``
    when the caller has it): only the files it holds are stat'ed (a thousand missions, each
    refresh)."""
    mdir = os.path.join(layout.missions_path, check_id(mission_id, "mission"))
    if present is None:
        present = listing(mdir)
    prefix = mdir + os.sep
    out: list[str] = []
    for name, first in zip(NAMES, _FIRST, strict=True):
        out.append(stamp(prefix + name) if first in present else "-")
    return " ".join(out)


def storable(view: MissionView, feed: Any) -> bool:
    """True when the row depends on its files alone: nothing runs or was cut short, and the
    whole log is folded (a live owner's liveness is never stored)."""
    if view.live or view.verifying or view.interrupted or view.catching_up is not None:
        return False
    if view.harness is not None and view.harness.status in _RUNNING:
        return False
    if view.status == "invalid" or view.verdict == "interrupted" or view.problems:
        return False  # a bad file or line is read (and counted) again, never stored
    if feed is None:
        return False  # derived without its log's fold (a row not reached yet)
    try:
        size = os.stat(feed.path).st_size
    except OSError:
        size = 0
    # the whole log read, to a line's end: a deferred feed opens there
    return feed.history is None and not feed.more and feed.live.offset == size


class MissionRows:
    def __init__(self, layout: Layout, index: Index | None) -> None:
        self.layout = layout
        self.index = index
        self._stored: dict[str, tuple[str, str]] | None = None

    def signature(self, mission_id: str, present: set[str] | None = None) -> str:
        return inputs_signature(self.layout, mission_id, present)

    def cached(
        self, mission_id: str, present: set[str] | None = None
    ) -> tuple[MissionView | None, str]:
        """The stored row when its files are as they were, and their signature now."""
        key = self.signature(mission_id, present)
        if self.index is None:
            return None, key
        if self._stored is None:
            self._stored = self.index.entries(KIND)
        found = self._stored.pop(mission_id, None)
        if found is None or found[0] != key:
            return None, key
        try:
            view = adapter().validate_json(found[1])
        except pydantic.ValidationError:
            return None, key
        return (view if view.mission_id == mission_id else None), key

    def remember(self, mission_id: str, key: str, view: MissionView, feed: Any) -> None:
        """Store a row derived from files whose signature was ``key`` before they were read
        and still is."""
        if self.index is None or not storable(view, feed) or self.signature(mission_id) != key:
            return
        self.index.put(KIND, mission_id, key, adapter().dump_json(view).decode())
