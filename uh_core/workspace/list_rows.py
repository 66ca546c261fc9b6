"""``mission list``'s rows: one per mission, from the derived index when its files are as
they were (``uh_core.workspace.index``), else from its files (and kept there).

A row is the mission's id, title and status, its latest verdict (a verify's, or the
promotion that landed it), when, its criteria counts and its promotion. A first listing of
many missions no index knows derives them on two cores (``uh_core.workspace.twocores``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from uh_core.layout import Layout
from uh_core.procid import Probe
from uh_core.workspace import twocores
from uh_core.workspace.index import Index, open_index
from uh_core.workspace.mission_rows import inputs_signature

KIND = "mission-list"


def _verdict(path: Path) -> tuple[str | None, str | None]:
    """(status, finished_at) of the latest verification.yaml, read through its model."""
    from uh_core.compat.readers import load_verification
    from uh_core.errors import UhError

    if not path.is_file():
        return None, None
    try:
        result = load_verification(path)
    except UhError:
        return "unreadable", None
    return result.status, result.finished_at


def _promotion(layout: Layout, mission_id: str) -> Any:
    """The latest decision (None when none, or when promotion.yaml does not parse)."""
    from uh_core.errors import UhError
    from uh_core.promote.record import read_promotion

    try:
        return read_promotion(layout, mission_id)
    except UhError:
        return None


def list_row(layout: Layout, mission_id: str, probe: Probe) -> tuple[dict[str, Any], bool]:
    """One mission's row of ``mission list`` from its files, and whether it may be kept in
    the derived index (nothing runs)."""
    from uh_core.errors import UhError
    from uh_core.events.observe import MissionObserver
    from uh_core.missions import load_mission
    from uh_core.promote.record import latest_verdict
    from uh_core.verify.synthetic import planned
    from uh_core.workspace.liveness import verify_lost

    try:
        mission = load_mission(layout, mission_id).mission
    except UhError as exc:
        row: dict[str, Any] = {"id": mission_id, "title": None, "status": "invalid"}
        row |= {"last_verdict": None}
        row |= {"verified_at": None, "criteria": 0, "declared_criteria": 0, "promotion": None}
        return row | {"error": exc.one_line()}, False
    verdict, at = _verdict(layout.verification_file(mission.id))
    observer = MissionObserver(mission.id, layout.mission_events(mission.id))
    observer.poll()
    running = observer.state.running
    if running:
        gone = verify_lost(probe, observer.state)  # its process died: not running
        verdict = "running" if gone is None else "interrupted"
        at = at if gone is None else gone.seen or at
    record = _promotion(layout, mission.id)
    declared = len(mission.criteria())
    row = {
        "id": mission.id,
        "title": mission.display_title,
        "status": mission.status,
        # the promotion onto this branch, until a verification after it
        "last_verdict": latest_verdict(verdict, at, record)[0],
        "verified_at": at,
        "criteria": declared + len(planned(mission)),  # as verify and the dashboard
        "declared_criteria": declared,
        "promotion": None
        if record is None
        else {
            "decision": record.decision,
            "at": record.promoted_at,
            "commit": record.commit,
            "verification_status": record.verification_status,
        },
        "error": None,
    }
    return row, not running and verdict != "unreadable"


def derive_into(
    index: Index, layout: Layout, mission_id: str, probe: Probe, key: str | None = None
) -> dict[str, Any]:
    """One mission's row from its files, stored when nothing runs and its files did not
    change while it was read (``key``: their signature, when the caller just took it)."""
    key = inputs_signature(layout, mission_id) if key is None else key
    row, keep = list_row(layout, mission_id, probe)
    if keep and inputs_signature(layout, mission_id) == key:
        index.put(KIND, mission_id, key, json.dumps(row))
    return row


class _Helper:
    """A reader of its own (its own index connection) that derives rows and stores them."""

    def __init__(self, layout: Layout, index: Index | None = None) -> None:
        self.layout = layout
        self.index = index if index is not None else open_index(layout)
        self.probe = Probe()

    def first(self) -> None:
        pass

    def derive(self, mission_id: str) -> None:
        derive_into(self.index, self.layout, mission_id, self.probe)

    def close(self) -> None:
        self.index.flush()


def mission_list(layout: Layout) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Every mission's row, sorted by id, and the missions whose files do not read (id →
    the one-line error)."""
    index = open_index(layout)
    try:
        ids = layout.mission_ids()
        if len(ids) - index.count(KIND) >= twocores.MIN_KEYS:  # a first listing at scale
            ours = _Helper(layout, index)
            twocores.share(ids, ours.derive, lambda: _Helper(layout), min_keys=0)
            ours.close()
        stored = index.entries(KIND)
        rows: list[dict[str, Any]] = []
        broken: dict[str, str] = {}
        probe = Probe()
        for mission_id in ids:
            key = inputs_signature(layout, mission_id)
            found = stored.get(mission_id)
            row: dict[str, Any] | None = None
            if found is not None and found[0] == key:
                try:
                    row = json.loads(found[1])
                except ValueError:
                    row = None
            if not isinstance(row, dict) or row.get("id") != mission_id:
                row = derive_into(index, layout, mission_id, probe, key)
            if row["error"]:
                broken[mission_id] = row["error"]
            rows.append(row)
    finally:
        index.close()
    rows.sort(key=lambda row: row["id"])
    return rows, broken
