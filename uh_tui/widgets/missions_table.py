"""The missions: live indicator, id, status, last verdict, criteria, trouble badge, title."""

from __future__ import annotations

from rich.text import Text

from uh_core.shown import LINE, VALUE, clip
from uh_core.workspace.state import MissionView
from uh_tui import look, ticking
from uh_tui.widgets.keyed_table import KeyedTable, LazyRows, Row

ID_CHARS = 80  # a mission id in a cell
TITLE_CHARS = VALUE  # a title in the flexible column (an error line: shown.LINE)


class MissionsTable(KeyedTable):
    COLUMNS = (
        ("mission", "mission"),
        ("status", "status"),
        ("verdict", "verdict"),
        ("acs", "ACs"),
        ("live", "live"),
        ("note", "note"),
        ("title", "title"),
    )
    MAX_WIDTHS = {"live": 34, "note": 16}
    FLEX = "title"
    SHRINK = ("note", "live", "mission", "status")

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._given: tuple[list[MissionView], dict[str, str], dict[str, str]] = ([], {}, {})

    def on_mount(self) -> None:  # KeyedTable's on_mount runs too (Textual calls each class's)
        ticking.every_few_seconds(self, self._tick)

    def _tick(self) -> None:
        """``⚠ interrupted · last seen 10s ago`` moves on: only changed cells are redrawn."""
        if self._rows:
            self.show(*self._given)

    def show(
        self,
        missions: list[MissionView],
        launching: dict[str, str],
        errors: dict[str, str],
    ) -> None:
        self._given = (missions, dict(launching), dict(errors))
        self.set_rows(
            LazyRows(
                [m.mission_id for m in missions],
                lambda i: _row(
                    missions[i],
                    launching.get(missions[i].mission_id),
                    missions[i].mission_id in errors,
                ),
            )
        )


def _note(mission: MissionView, launch_failed: bool) -> Text:
    if launch_failed:
        return Text("✗ launch failed", style="bold red")
    if mission.badge:
        return Text(f"⚠ {mission.badge}", style="bold red")
    if mission.catching_up is not None:
        return Text(f"reading {mission.catching_up:.0%}", style="yellow")
    if mission.green is not None:
        return Text("● green: review", style="green")  # on its branch, awaiting a human
    if mission.handover:
        return Text("⚑ handed over", style="yellow")
    return Text("")


def _row(mission: MissionView, launching: str | None, launch_failed: bool) -> Row:
    passed = sum(1 for c in mission.criteria if c.status == "passed")
    acs = f"{passed}/{len(mission.criteria)}" if mission.criteria else "-"
    live = look.interrupted_mission(mission) or look.live(mission.live)
    if not mission.live and launching:
        live = Text(f"◌ starting {launching}", style="cyan")
    # clipped before it is split or measured: a row costs the same whatever the file holds
    shown = clip(mission.error, LINE) if mission.error else clip(mission.title, TITLE_CHARS)
    title = Text(" ".join(shown.split()))
    if mission.error:
        title.stylize("red")
    return (
        mission.mission_id,
        (
            Text(clip(mission.mission_id, ID_CHARS), style="bold"),
            look.status(mission.status),
            look.badge(mission.verdict),
            acs,
            live,
            _note(mission, launch_failed),
            title,
        ),
    )
