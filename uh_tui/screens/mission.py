"""One mission up close: its criteria live, the selected one's output, findings, its events;
what of it was interrupted (its process died mid-run) and when it was last seen (the head's
relative times move with the clock: ``uh_tui.ticking``)."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Header, Static

from uh_core.workspace.state import EventLine, MissionView, Snapshot
from uh_tui import look, ticking
from uh_tui.screens.live import showing
from uh_tui.widgets.criteria_table import CriteriaTable
from uh_tui.widgets.criterion_detail import CriterionDetail
from uh_tui.widgets.event_pane import EventPane
from uh_tui.widgets.footer import UhFooter
from uh_tui.widgets.status_line import StatusLine


class MissionScreen(Screen[None]):
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="app.back")]

    def __init__(self, snapshot: Snapshot, mission_id: str, history: list[EventLine]) -> None:
        super().__init__()
        self.ready = False
        self.snapshot = snapshot
        self.mission_id = mission_id
        self.history = history
        self._head: str | None = None  # the head's text as last drawn

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="mission-head")
        with Horizontal(id="mission-body"):
            yield CriteriaTable(id="mission-criteria")
            yield CriterionDetail(id="mission-criterion")
        yield Static(id="mission-findings")
        yield EventPane(id="mission-events", mission=self.mission_id)
        yield StatusLine(id="status-line")
        yield UhFooter()

    def on_mount(self) -> None:
        self.query_one("#mission-criteria", CriteriaTable).border_title = "acceptance criteria"
        self.query_one("#mission-events", EventPane).border_title = f"events · {self.mission_id}"
        self.query_one("#mission-events", EventPane).add(self.history)
        self.show(self.snapshot)
        self.ready = True
        self.query_one("#mission-criteria", CriteriaTable).focus()
        ticking.every_few_seconds(self, self._tick)

    def _tick(self) -> None:
        """The head's ``FAILED 3m ago`` and ``last seen 27s ago`` move with the clock."""
        if showing(self):
            self._show_head(self.snapshot.mission(self.mission_id))

    def _show_head(self, mission: MissionView | None) -> None:
        head = _head(mission, self.mission_id)
        key = _plain(head)
        if key != self._head:  # an unchanged head is not drawn again
            self._head = key
            self.query_one("#mission-head", Static).update(head)

    def selected_mission(self) -> str:
        return self.mission_id

    def selected_sandbox(self) -> str | None:
        return None

    def show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        mission = snapshot.mission(self.mission_id)
        self.sub_title = self.mission_id
        self._show_head(mission)
        self.query_one("#mission-criteria", CriteriaTable).show(mission.criteria if mission else ())
        self._show_criterion()
        findings = self.query_one("#mission-findings", Static)
        findings.update(_findings(mission))

    def _show_criterion(self) -> None:
        mission = self.snapshot.mission(self.mission_id)
        key = self.query_one("#mission-criteria", CriteriaTable).selected_key
        found = next((c for c in mission.criteria if c.ac_id == key), None) if mission else None
        self.query_one("#mission-criterion", CriterionDetail).show(
            found, running=bool(mission and mission.verifying)
        )

    def add_events(self, lines: tuple[EventLine, ...]) -> None:
        self.query_one("#mission-events", EventPane).add(lines)

    @on(DataTable.RowHighlighted, "#mission-criteria")
    def _moved(self, _: DataTable.RowHighlighted) -> None:
        self._show_criterion()


def _head(mission: MissionView | None, mission_id: str) -> Group | Text:
    if mission is None:
        return Text(f"{mission_id}: no longer in .harness/missions/", style="bold red")
    line = Text(mission.mission_id, style="bold")
    line.append(f"  {look.short(mission.title, 60)}  ")
    line.append_text(look.status(mission.status))
    line.append("  ")
    line.append_text(look.badge(mission.verdict))
    if mission.verdict == "interrupted":  # its verify's process died: when last seen alive
        line.append(f" {look.last_seen(mission.verdict_at)}", style="yellow")
    elif mission.verdict_at:
        line.append(f" {look.ago(mission.verdict_at)}", style="dim")
    if mission.live:
        line.append("  ")
        line.append_text(look.live(mission.live))
    parts: list[Text] = [line]
    for what, seen in look.interruptions(mission):
        if what != "verify":  # the verdict says that one
            parts.append(look.interrupted(seen, what))
    if mission.error:
        parts.append(Text(f"⚠ {mission.error}", style="bold red"))
    if mission.handover:  # waiting for a human's answer (yellow), or answered
        parts.append(Text(mission.handover, style="dim" if mission.answers else "yellow"))
        parts.extend(Text(f"  {answer}", style="dim") for answer in mission.answers)
    if mission.ts_runs:  # the TypeScript uh's newest run here, and its operator's verdict
        newest = mission.ts_runs[0]
        tone = "dim" if newest.verdict in (None, "pass") else "yellow"
        parts.append(Text(newest.line(len(mission.ts_runs)), style=tone))
    if mission.objective:
        parts.append(Text(look.short(mission.objective, 220), style="dim"))
    if mission.depends_on:
        parts.append(Text("depends on: " + ", ".join(mission.depends_on), style="dim"))
    return Group(*parts)


def _plain(shown: Group | Text) -> str:
    parts = shown.renderables if isinstance(shown, Group) else [shown]
    return "\n".join(part.plain if isinstance(part, Text) else repr(part) for part in parts)


def _findings(mission: MissionView | None) -> Group | Text:
    if mission is None:
        return Text("")
    lines = [Text(f"⚠ {problem}", style="bold red") for problem in mission.problems]
    # each running state whose process is gone, in full: its pid and when it was last seen
    lines += [Text(f"⚠ {line}", style="yellow") for line in mission.interrupted]
    for finding in mission.findings[:6]:
        style = "red" if finding.startswith("error") else "yellow"
        lines.append(Text(look.short(finding, 200), style=style))
    if len(mission.findings) > 6:
        more = look.plural(len(mission.findings) - 6, "more finding")
        lines.append(Text(f"… {more}", style="dim"))
    return Group(*lines) if lines else Text("no findings", style="dim")
