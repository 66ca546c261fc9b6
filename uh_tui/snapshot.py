"""What the dashboard reads, gathered through uh_core's own readers (no private parsing)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from uh_core.errors import UhError
from uh_core.events.observe import MissionObserver
from uh_core.layout import Layout
from uh_core.missions import load_all
from uh_core.models.base import load_yaml_model
from uh_core.models.verification import VerificationResult


@dataclass
class MissionRow:
    mission_id: str
    title: str
    status: str
    verdict: str
    criteria: int
    error: str | None = None


@dataclass
class Snapshot:
    root: Path
    has_harness: bool
    missions: list[MissionRow] = field(default_factory=list)


def _verdict(layout: Layout, mission_id: str, observer: MissionObserver) -> str:
    if observer.state.running:
        return "running"
    path = layout.verification_file(mission_id)
    if not path.is_file():
        return "-"
    try:
        return load_yaml_model(path, VerificationResult).status
    except UhError:
        return "unreadable"


def read_snapshot(root: Path, observers: dict[str, MissionObserver] | None = None) -> Snapshot:
    layout = Layout(root)
    if not layout.harness.is_dir():
        return Snapshot(root, has_harness=False)
    observers = observers if observers is not None else {}
    loaded, broken = load_all(layout)
    rows: list[MissionRow] = []
    for item in loaded:
        mission = item.mission
        observer = observers.setdefault(
            mission.id, MissionObserver(mission.id, layout.mission_events(mission.id))
        )
        observer.poll()
        rows.append(
            MissionRow(
                mission.id,
                mission.display_title,
                mission.status,
                _verdict(layout, mission.id, observer),
                len(mission.criteria()),
            )
        )
    for mission_id, error in broken.items():
        rows.append(MissionRow(mission_id, "", "invalid", "-", 0, error.one_line()))
    rows.sort(key=lambda row: row.mission_id)
    return Snapshot(root, True, rows)
