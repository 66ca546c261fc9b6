"""Finding and loading missions: one place that turns mission.yaml into a ``Mission``."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from uh_core.errors import NotFoundError, UhError, ValidationError
from uh_core.ids import check_id
from uh_core.layout import Layout
from uh_core.models.base import problem_line, read_document, validate_document
from uh_core.models.mission import Mission
from uh_core.yamldoc import YamlDocument


@dataclass
class LoadedMission:
    mission: Mission
    path: Path
    display: str
    # The document as read: its warning lines below name positions in it, found when a
    # reader asks for them (``mission validate``, ``mission show``), not on every load.
    doc: YamlDocument | None = None

    @cached_property
    def warnings(self) -> list[str]:
        return _warnings(self.mission, self.doc, self.display) if self.doc else []

    @cached_property
    def ts_warnings(self) -> list[str]:
        """What the TypeScript uh would say of it (uh_core.compat.mission_rules): warnings
        in ``mission validate``, errors with ``--strict``."""
        return _ts_warnings(self.doc, self.display) if self.doc else []


def _warnings(mission: Mission, doc: YamlDocument, display: str) -> list[str]:
    return [
        problem_line(
            display,
            doc,
            (key,),
            f"unknown top-level key '{key}' (kept, not used by uh)",
            "remove it or check its spelling",
        )
        for key in mission.unknown_keys()
    ]


def _misspelt(mission: Mission, doc: YamlDocument, display: str) -> None:
    """An unknown top-level key one slip away from one uh reads is an error, not a warning:
    ``acceptance_criterias:`` would drop every criterion, and a verify of what is left
    could pass on nothing the author meant to check."""
    import difflib

    known = sorted(Mission.model_fields)
    problems = [
        problem_line(
            display,
            doc,
            (key,),
            f"unknown top-level key '{key}': did you mean '{close[0]}'?",
            f"rename it to {close[0]}",
        )
        for key in mission.unknown_keys()
        if (close := difflib.get_close_matches(key, known, n=1, cutoff=0.8))
    ]
    if problems:
        raise ValidationError(problems)


def _ts_warnings(doc: YamlDocument, display: str) -> list[str]:
    from uh_core.compat.mission_rules import PREFIX, ts_problems

    return [
        problem_line(display, doc, loc, PREFIX + what, fix)
        for loc, what, fix in ts_problems(doc.data)
    ]


def read_mission_file(path: Path, display: str | None = None) -> LoadedMission:
    shown = display or str(path)
    doc = read_document(path, shown)
    mission = validate_document(doc, Mission, shown)
    _misspelt(mission, doc, shown)
    return LoadedMission(mission, path, shown, doc)


def load_mission(layout: Layout, mission_id: str) -> LoadedMission:
    """The mission ``mission_id`` under ``layout``; its id must match its directory."""
    check_id(mission_id, "mission")
    path = layout.mission_file(mission_id)
    display = layout.rel(path)
    if not path.is_file():
        known = layout.mission_ids()
        hint = f"known missions: {', '.join(known)}" if known else "no missions exist yet"
        raise NotFoundError(
            f"unknown mission {mission_id!r}: {display} does not exist ({hint})",
            fix="run `uh-core mission list`",
        )
    doc = read_document(path, display)
    mission = validate_document(doc, Mission, display)
    _misspelt(mission, doc, display)
    if mission.id != mission_id:
        raise ValidationError(
            [
                problem_line(
                    display,
                    doc,
                    ("id",),
                    f"id {mission.id!r} does not match its directory {mission_id!r}",
                    f"set id: {mission_id} or rename the directory",
                )
            ]
        )
    return LoadedMission(mission, path, display, doc)


def load_all(layout: Layout) -> tuple[list[LoadedMission], dict[str, UhError]]:
    """Every mission under the root; broken ones are returned apart, by directory name."""
    loaded: list[LoadedMission] = []
    broken: dict[str, UhError] = {}
    for mission_id in layout.mission_ids():
        try:
            loaded.append(load_mission(layout, mission_id))
        except UhError as exc:
            broken[mission_id] = exc
    return loaded, broken
