"""The main screen: missions and their last verdicts, refreshed from the files."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from uh_core.events.observe import MissionObserver
from uh_tui.snapshot import Snapshot, read_snapshot
from uh_tui.widgets.missions_table import MissionsTable


class DashboardScreen(Screen[None]):
    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot
        self.observers: dict[str, MissionObserver] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="root-line")
        yield MissionsTable(id="missions")
        yield Footer()

    def on_mount(self) -> None:
        self.show(self.snapshot)

    def show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        count = len(snapshot.missions)
        self.query_one("#root-line", Static).update(f"{snapshot.root}  ·  {count} missions")
        self.query_one(MissionsTable).show(snapshot.missions)

    def refresh_from_disk(self) -> None:
        self.show(read_snapshot(self.snapshot.root, self.observers))
