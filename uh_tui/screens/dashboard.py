"""The main screen: four views (missions, runtimes, harness, sandboxes) over a live event pane.

The screen only shows what the app hands it (``show(snapshot)``, ``add_events(lines)``);
it never reads a file. Which mission, runtime or sandbox is selected is its own state.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Header, Input, Static, TabbedContent, TabPane

from uh_core.workspace.state import EventLine, MissionView, Snapshot
from uh_tui import look, ticking
from uh_tui.screens.live import showing
from uh_tui.widgets.comparison_table import ComparisonTable
from uh_tui.widgets.criteria_table import CriteriaTable
from uh_tui.widgets.criterion_detail import CriterionDetail
from uh_tui.widgets.diff_groups import DiffGroups
from uh_tui.widgets.event_pane import EventPane
from uh_tui.widgets.footer import UhFooter
from uh_tui.widgets.harness_detail import HarnessDetail
from uh_tui.widgets.harness_runs_table import HarnessRunsTable
from uh_tui.widgets.harness_table import HarnessTable
from uh_tui.widgets.missions_table import MissionsTable
from uh_tui.widgets.pass_rate import PassRate
from uh_tui.widgets.sandboxes_table import SandboxesTable
from uh_tui.widgets.status_line import StatusLine

VIEWS = ("missions", "runtimes", "harness", "sandboxes")
_UNSET = object()
PANES = {
    "missions": ("#missions", "#criteria", "#criterion-detail", "#events"),
    "runtimes": ("#comparison", "#events"),
    "harness": ("#harness", "#harness-detail", "#harness-runs", "#events"),
    "sandboxes": ("#sandboxes", "#events"),
}


class DashboardScreen(Screen[None]):
    BINDINGS = [
        Binding("enter", "drill", "Open", id="app.drill", priority=True),
        Binding("tab", "cycle(1)", "Next pane", id="app.cycle_panes", show=False),
        Binding("shift+tab", "cycle(-1)", "Previous pane", id="app.cycle_back", show=False),
        Binding("escape", "clear_filter", "Clear filter", id="app.clear_filter", show=False),
        Binding("1", "view('missions')", "Missions", id="view.missions", show=False),
        Binding("2", "view('runtimes')", "Runtimes", id="view.runtimes", show=False),
        Binding("3", "view('harness')", "Harness", id="view.harness", show=False),
        Binding("4", "view('sandboxes')", "Sandboxes", id="view.sandboxes", show=False),
    ]

    def __init__(self, snapshot: Snapshot, *, view: str = "missions", mission: str | None = None):
        super().__init__()
        self.snapshot = snapshot
        self.initial_view = view if view in VIEWS else "missions"
        self.wanted_mission = mission
        self.filter = ""
        self.ready = False  # composed and shown once: updates may come
        self._shown: dict[str, object] = {}
        self._later: dict[str, list[Widget]] = {}  # views mounted after the first frame
        self.pending_events: list[EventLine] = []  # events that arrived before that

    def compose(self) -> ComposeResult:
        yield Header()
        with TabbedContent(initial=f"tab-{self.initial_view}", id="views"):
            with TabPane("Missions", id="tab-missions"):
                yield MissionsTable(id="missions")
                with Horizontal(id="mission-detail"):
                    yield CriteriaTable(id="criteria")
                    yield CriterionDetail(id="criterion-detail")
            for view in ("runtimes", "harness", "sandboxes"):
                with TabPane(view.capitalize(), id=f"tab-{view}"):
                    yield from self._compose_view(view)
        with Vertical(id="bottom"):
            yield EventPane(id="events")
            yield Input(
                id="filter",
                placeholder="filter missions, harness, sandboxes and events — enter keeps it,"
                " escape clears",
            )
            yield StatusLine(id="status-line")
        yield UhFooter()

    def _compose_view(self, view: str) -> list[Widget]:
        """A view's widgets; a view not shown first is mounted after the first frame
        (``_mount_later``): its widgets' styles and layout are not in that frame's way."""
        widgets = _view_widgets(view)
        if view == self.initial_view:
            return widgets
        self._later[view] = widgets
        return []

    def _live(self, view: str) -> bool:
        """Whether ``view``'s widgets are mounted (a hidden view's come after the first frame)."""
        return view not in self._later

    async def _mount_later(self) -> None:
        for view, widgets in list(self._later.items()):
            if not showing(self):
                return  # being removed: nothing to mount into
            await self.query_one(f"#tab-{view}", TabPane).mount_all(widgets)
            if not all(widget.is_attached for widget in widgets):
                return
            del self._later[view]
            self._shown.pop(view, None)
        if showing(self):
            self.show(self.snapshot)

    def on_mount(self) -> None:
        self.query_one("#filter", Input).cursor_blink = False
        self._mark_view()
        self.query_one("#missions", MissionsTable).border_title = "missions"
        self.query_one("#criteria", CriteriaTable).border_title = "acceptance criteria"
        self.query_one("#criterion-detail", CriterionDetail).border_title = "output"
        wanted = self.wanted_mission
        self.show(self.snapshot)
        self.add_events(tuple(self.pending_events))
        self.pending_events = []
        self.ready = True
        ticking.every_few_seconds(self, self._tick)
        if wanted:
            # the first rows arrive with the screen: a cursor set before the table's first
            # layout does not stick, so select again once it is laid out
            self.call_after_refresh(self._select_mission, wanted)
        self.call_after_refresh(self.query_one(PANES[self.initial_view][0]).focus)
        if self._later:
            self.call_after_refresh(self._mount_later)

    def _tick(self) -> None:
        """Relative times move with the clock: the panes whose text has one are shown
        again (``_changed`` keys hold that text: the rest is left alone)."""
        if showing(self):
            self.show(self.snapshot)

    def _select_mission(self, mission_id: str) -> None:
        table = self.query_one("#missions", MissionsTable)
        if table.selected_key != mission_id:
            table.select_key(mission_id)

    # -- what is selected -----------------------------------------------------------------

    @property
    def view(self) -> str:
        active = self.query_one("#views", TabbedContent).active or "tab-missions"
        return active.removeprefix("tab-")

    def visible_missions(self) -> list[MissionView]:
        needle = self.filter.lower()
        return [
            m
            for m in self.snapshot.missions
            if not needle or needle in m.mission_id.lower() or needle in m.title.lower()
        ]

    def selected_mission(self) -> str | None:
        """The mission the keys act on: the harness or sandbox row's mission in those
        views, else the missions table's row."""
        if self.view == "harness" and self._live("harness"):
            key = self.query_one("#harness", HarnessTable).selected_key
            if key:
                return key
        if self.view == "sandboxes":
            sandbox = self.selected_sandbox()
            found = next((s for s in self.snapshot.sandboxes if s.id == sandbox), None)
            if found:
                return found.mission_id
        return self.query_one("#missions", MissionsTable).selected_key or self.wanted_mission

    def selected_runtime(self) -> str | None:
        if not self._live("runtimes"):
            return None
        return self.query_one("#comparison", ComparisonTable).selected_key

    def selected_sandbox(self) -> str | None:
        if self.view == "sandboxes":
            if not self._live("sandboxes"):
                return None
            return self.query_one("#sandboxes", SandboxesTable).selected_key
        if self.view == "runtimes":
            mission = self.snapshot.mission(self.selected_mission())
            runtime = self.selected_runtime()
            if mission and runtime:
                row = next((r for r in mission.runtimes if r.runtime == runtime), None)
                return row.sandbox if row else None
        return None

    # -- showing ----------------------------------------------------------------------------

    def _changed(self, key: str, value: object) -> bool:
        """True (and remembered) when ``value`` differs from what ``key`` showed last: an
        update redraws only the panes whose data changed (200 events a second must not
        re-lay-out every pane)."""
        if self._shown.get(key, _UNSET) == value:
            return False
        self._shown[key] = value
        return True

    def show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        app = self.app
        launching = getattr(app, "launching", {})
        errors = getattr(app, "launch_errors", {})
        missions = self.visible_missions()
        table = self.query_one("#missions", MissionsTable)
        state = (tuple(missions), tuple(launching.items()), tuple(errors), self.filter)
        if self._changed("missions", state):
            table.show(missions, launching, errors)
            if self.wanted_mission and table.selected_key != self.wanted_mission:
                table.select_key(self.wanted_mission)
            self.wanted_mission = None if table.selected_key else self.wanted_mission
            title = f"missions · {len(missions)}/{len(snapshot.missions)}"
            title += _filtered(self.filter)
            if table.border_title != title:  # setting it repaints the table, even unchanged
                table.border_title = title
        self._show_mission()
        self._show_harness()
        self._show_sandboxes(errors)
        if self._changed("root", snapshot.root):
            self.sub_title = str(snapshot.root)

    def _show_mission(self) -> None:
        mission = self.snapshot.mission(self.query_one("#missions", MissionsTable).selected_key)
        mission_id = mission.mission_id if mission else None
        if self._changed("criteria", (mission_id, mission.criteria if mission else ())):
            criteria = self.query_one("#criteria", CriteriaTable)
            criteria.show(mission.criteria if mission else ())
            title = f"acceptance criteria · {mission_id}" if mission else "acceptance criteria"
            if criteria.border_title != title:
                criteria.border_title = title
        gone = mission is not None and mission.verdict == "interrupted"
        seen = mission.verdict_at if mission is not None and gone else None
        if self._changed("criteria-gone", (gone, seen, look.last_seen(seen))):
            # a verify whose process died: what it had not checked reads unobserved
            self.query_one("#criteria", CriteriaTable).border_subtitle = (
                look.interrupted(seen, "verify") if gone else None
            )
        self._show_criterion(mission)
        runtimes = mission.runtimes if mission else ()
        comparison = mission.comparison if mission else None
        banner = _runtimes_banner(mission)  # its `compared 3m ago` moves with the clock
        state = (mission_id, runtimes, comparison, banner.plain)
        if self._live("runtimes") and self._changed("runtimes", state):
            self.query_one("#comparison", ComparisonTable).show(runtimes)
            self.query_one("#groups", DiffGroups).show(comparison, runtimes)
            self.query_one("#runtimes-banner", Static).update(banner)

    def _show_criterion(self, mission: MissionView | None) -> None:
        key = self.query_one("#criteria", CriteriaTable).selected_key
        found = next((c for c in mission.criteria if c.ac_id == key), None) if mission else None
        running = bool(mission and mission.verifying)
        if self._changed("criterion", (found, running)):
            self.query_one("#criterion-detail", CriterionDetail).show(found, running=running)

    def _show_harness(self) -> None:
        if not self._live("harness"):
            return
        harness = self.snapshot.harness
        # when each interrupted mission's harness run was last seen (its row has no field)
        seen = {
            m.mission_id: m.harness.last_seen
            for m in self.snapshot.missions
            if m.harness is not None and m.harness.status == "interrupted"
        }
        # the relative times these panes show: a tick redraws them when one has moved
        times = (
            tuple(look.ago(ledger.started_at) for ledger in harness.ledgers),
            tuple(look.last_seen(at) for at in seen.values()),
            look.last_seen(harness.interrupted_at) if harness.interrupted else None,
        )
        # the answers to hand-overs, from the missions' logs (the detail pane says them)
        answered = tuple((m.mission_id, m.answers) for m in self.snapshot.missions if m.answers)
        if not self._changed("harness", (harness, self.filter, seen, times, answered)):
            return
        needle = self.filter.lower()
        rows = [r for r in harness.requirements if not needle or needle in r.mission_id.lower()]
        self.query_one("#harness", HarnessTable).show(rows, seen)
        title = "harness · latest per mission" + _filtered(self.filter)
        if self.query_one("#harness", HarnessTable).border_title != title:
            self.query_one("#harness", HarnessTable).border_title = title
        self.query_one("#harness-runs", HarnessRunsTable).show(harness)
        self.query_one("#pass-rate", PassRate).show(harness)
        self._show_harness_detail()

    def _show_harness_detail(self) -> None:
        """The selected harness row, whole: reason, fix, notes, rounds, next step."""
        if not self._live("harness"):
            return
        key = self.query_one("#harness", HarnessTable).selected_key
        found = next((r for r in self.snapshot.harness.requirements if r.mission_id == key), None)
        mission = self.snapshot.mission(key)
        seen = mission.harness.last_seen if mission and mission.harness else None
        decided = mission.promotion if mission else None
        answered = mission.answers if mission else ()
        if self._changed("harness-detail", (found, seen, decided, answered)):
            detail = self.query_one("#harness-detail", HarnessDetail)
            detail.show(found, seen, decided, answered)
            title = f"why · {key}" if found else "why"
            if detail.border_title != title:
                detail.border_title = title

    def _show_sandboxes(self, errors: dict[str, str]) -> None:
        state = (self.snapshot.sandboxes, self.snapshot.sandbox_problem, tuple(errors), self.filter)
        if not self._live("sandboxes") or not self._changed("sandboxes", state):
            return
        needle = self.filter.lower()
        rows = [
            s
            for s in self.snapshot.sandboxes
            if not needle or needle in s.mission_id.lower() or needle in s.id.lower()
        ]
        self.query_one("#sandboxes", SandboxesTable).show(rows, errors)
        banner = self.query_one("#sandboxes-banner", Static)
        if self.snapshot.sandbox_problem:
            banner.update(Text(f"⚠ {self.snapshot.sandbox_problem}", style="bold red"))
        else:
            in_use = sum(1 for s in rows if s.in_use)
            banner.update(
                Text(
                    f"{look.plural(len(rows), 'sandbox')}{_filtered(self.filter)}"
                    f" · {in_use} in use"
                    " · d discards the selected one",
                    style="dim",
                )
            )

    def add_events(self, lines: tuple[EventLine, ...]) -> None:
        self.query_one("#events", EventPane).add(lines)

    # -- keys -------------------------------------------------------------------------------

    def focus_view(self, view: str) -> None:
        tabs = self.query_one("#views", TabbedContent)
        if tabs.active != f"tab-{view}":
            tabs.active = f"tab-{view}"
        if self._live(view):
            self.query_one(PANES[view][0]).focus()

    def action_view(self, view: str) -> None:
        self.focus_view(view)

    def action_cycle(self, step: int) -> None:
        if not self._live(self.view):
            return
        panes: list[Widget] = [
            pane
            for pane in (self.query_one(selector) for selector in PANES[self.view])
            if pane.display  # a narrow terminal hides the criterion's output
        ]
        current = self.focused
        index = panes.index(current) if current in panes else -1
        panes[(index + step) % len(panes)].focus()

    def action_drill(self) -> None:
        focused = self.focused
        if isinstance(focused, Input):
            self.close_filter(keep=True)
            return
        opener = getattr(self.app, "open_detail", None)
        if opener is not None:
            opener()

    def open_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-open")
        box.value = self.filter
        box.focus()

    def close_filter(self, keep: bool) -> None:
        box = self.query_one("#filter", Input)
        if not keep:
            box.value = ""
            self.set_filter("")
        box.remove_class("-open")
        if self._live(self.view):
            self.query_one(PANES[self.view][0]).focus()

    def action_clear_filter(self) -> None:
        if self.filter or self.query_one("#filter", Input).has_class("-open"):
            self.close_filter(keep=False)

    def set_filter(self, text: str) -> None:
        self.filter = text.strip()
        self.query_one("#events", EventPane).set_filter(self.filter)
        self.show(self.snapshot)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.set_filter(event.value)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, _: Input.Submitted) -> None:
        self.close_filter(keep=True)

    @on(DataTable.RowHighlighted, "#missions")
    def _mission_moved(self, _: DataTable.RowHighlighted) -> None:
        self._show_mission()

    @on(DataTable.RowHighlighted, "#criteria")
    def _criterion_moved(self, _: DataTable.RowHighlighted) -> None:
        mission = self.snapshot.mission(self.query_one("#missions", MissionsTable).selected_key)
        self._show_criterion(mission)

    @on(DataTable.RowHighlighted, "#harness")
    def _harness_moved(self, _: DataTable.RowHighlighted) -> None:
        self._show_harness_detail()

    @on(TabbedContent.TabActivated, "#views")
    def _tab_changed(self, _: TabbedContent.TabActivated) -> None:
        self._mark_view()
        self.refresh_bindings()

    def _mark_view(self) -> None:
        """``-harness-view`` on the screen while the harness view shows: on a short terminal
        its mission's detail takes the event pane's rows (app.tcss)."""
        self.set_class(self.view == "harness", "-harness-view")


def _filtered(text: str) -> str:
    """`` · filter “div”`` on each pane the `/` filter narrows (missions, harness,
    sandboxes, events), or nothing."""
    return f" · filter “{text}”" if text else ""


def _runtimes_banner(mission: MissionView | None) -> Text:
    if mission is None:
        return Text("No mission selected.", style="dim")
    line = Text(mission.mission_id, style="bold")
    comparison = mission.comparison
    if comparison is not None:
        line.append("  ")
        line.append_text(look.badge(comparison.status))
        if comparison.base_commit:
            line.append(f"  base {comparison.base_commit[:10]}", style="dim")
        line.append(f"  · {look.plural(len(comparison.groups), 'diff group')}", style="dim")
        line.append(f"  · compared {look.ago(comparison.created_at)}", style="dim")
    live = [r.runtime for r in mission.runtimes if r.status == "running"]
    if live:
        line.append("  ")
        line.append_text(look.live("running " + ", ".join(live)))
    for what, seen in look.interruptions(mission):
        if what.startswith("run "):
            line.append("  ")
            line.append_text(look.interrupted(seen, what))
    if comparison is None and not mission.runtimes:
        line.append("  no runtime has run it yet — r runs one, a runs all", style="dim")
    return line


def _view_widgets(view: str) -> list[Widget]:
    """The widgets of the runtimes, harness or sandboxes view, titled."""
    if view == "runtimes":
        comparison = ComparisonTable(id="comparison")
        comparison.border_title = "runtimes"
        comparison.border_subtitle = "enter: its diff"
        return [Static(id="runtimes-banner"), comparison, DiffGroups(id="groups")]
    if view == "harness":
        harness = HarnessTable(id="harness")
        harness.border_title = "harness · latest per mission"
        detail = HarnessDetail(id="harness-detail")
        detail.border_title = "why"
        runs = HarnessRunsTable(id="harness-runs")
        runs.border_title = "runs"
        return [PassRate(id="pass-rate"), harness, detail, runs]
    sandboxes = SandboxesTable(id="sandboxes")
    sandboxes.border_title = "sandboxes"
    return [Static(id="sandboxes-banner"), sandboxes]
