"""The ``uh`` app: live views over what uh_core writes, and keys that launch ``uh-core``.

Three layers, one class each: ``uh_tui.live_app.LiveApp`` (the reader thread, the updates
it hands the UI, the status line), ``uh_tui.launch_actions.LaunchingApp`` (what the keys
launch) and ``UhApp`` here (the bindings, which keys are enabled, navigation, help, quit,
one frame for ``--once``).
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.app import App
from textual.binding import Binding
from textual.pilot import Pilot
from textual.screen import ModalScreen

from uh_tui.commands import UhCommands
from uh_tui.launch_actions import LaunchingApp
from uh_tui.screens.dashboard import DashboardScreen
from uh_tui.widgets.event_pane import EventPane

MISSION_ACTIONS = {"verify", "run", "run_all", "cancel", "review"}
LAUNCH_ACTIONS = MISSION_ACTIONS | {"harness", "discard", "filter"}


class UhApp(LaunchingApp):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "uh · Mission Control"
    COMMANDS = App.COMMANDS | {UhCommands}
    # classes every screen gets from the terminal's size (app.tcss): 80×24 is supported
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-medium"), (140, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit"),
        Binding("question_mark", "help", "Keys", id="app.help"),
        Binding("slash", "filter", "Filter", id="app.filter"),
        Binding("v", "verify", "Verify", id="mission.verify"),
        Binding("r", "run", "Run on…", id="mission.run"),
        Binding("a", "run_all", "Run all", id="mission.run_all"),
        Binding("h", "harness", "Harness", id="harness.run"),
        Binding("c", "cancel", "Cancel", id="mission.cancel"),
        Binding("d", "discard", "Discard", id="sandbox.discard"),
        Binding("p", "review", "Review", id="promotion.review"),
        Binding("A", "answer", "Answer", id="harness.answer", show=False),
        Binding("s", "steer", "Steer", id="mission.steer", show=False),
        Binding("m", "messages", "Messages", id="app.messages"),
        Binding("ctrl+r", "reload", "Reload", id="app.reload", show=False),
    ]

    # -- what the keys act on ---------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in LAUNCH_ACTIONS:
            if isinstance(self.screen, ModalScreen) or not self.snapshot.has_harness:
                return False
            if action in MISSION_ACTIONS and not self.current_mission():
                return None
        return True

    async def action_quit(self) -> None:
        """Quit at once; while launched commands run, ask first whether to leave them
        running (they go on by themselves) or cancel them."""
        from uh_tui.screens.quit import CANCEL, LEAVE, QuitScreen

        if isinstance(self.screen, QuitScreen):
            return
        if not self.in_flight:
            self._leave(cancel=False)
            return

        def answered(answer: str | None) -> None:
            if answer in (LEAVE, CANCEL):
                self._leave(cancel=answer == CANCEL)

        commands = [launch.command for launch in self.in_flight]
        self.push_screen(QuitScreen(commands), answered)

    # -- navigation --------------------------------------------------------------------------

    def _back_to_dashboard(self) -> DashboardScreen | None:
        board = self.dashboard()
        if board is None:
            return None
        while self.screen is not board and len(self.screen_stack) > 1:
            self.pop_screen()
        return board

    def show_view(self, view: str) -> None:
        board = self._back_to_dashboard()
        if board is not None:
            board.focus_view(view)

    def action_filter(self) -> None:
        board = self._back_to_dashboard()
        if board is not None:
            board.open_filter()

    def open_mission(self, mission_id: str) -> None:
        from uh_tui.screens.mission import MissionScreen

        board = self.dashboard()
        history = []
        if board is not None:
            pane = board.query_one("#events", EventPane)
            history = [line for line in pane.lines_seen if line.source == mission_id]
        self.push_screen(MissionScreen(self.snapshot, mission_id, history))

    def open_detail(self) -> None:
        from uh_tui.screens.runtime import RuntimeScreen

        board = self.dashboard()
        if board is None or self.screen is not board:
            return
        view = board.view
        mission = board.selected_mission()
        if view == "runtimes":
            runtime = board.selected_runtime()
            if mission and runtime:
                self.push_screen(RuntimeScreen(self.snapshot, mission, runtime))
            return
        if view == "sandboxes":
            sandbox = next(
                (s for s in self.snapshot.sandboxes if s.id == board.selected_sandbox()), None
            )
            if sandbox is None:
                return
            owner = self.snapshot.mission(sandbox.mission_id)
            if owner and any(r.sandbox == sandbox.id for r in owner.runtimes) and sandbox.runtime:
                self.push_screen(RuntimeScreen(self.snapshot, sandbox.mission_id, sandbox.runtime))
            else:
                self.open_mission(sandbox.mission_id)
            return
        if mission:
            self.open_mission(mission)

    def action_help(self) -> None:
        from uh_tui.screens.help import HelpScreen
        from uh_tui.screens.messages import MessagesScreen
        from uh_tui.screens.mission import MissionScreen
        from uh_tui.screens.review import ReviewScreen

        if isinstance(self.screen, HelpScreen):
            return
        rows: list[tuple[str, str, str]] = []
        bindings = [
            *self.BINDINGS,
            *DashboardScreen.BINDINGS,
            *MissionScreen.BINDINGS,
            *ReviewScreen.BINDINGS,
            *MessagesScreen.BINDINGS,
        ]
        seen: set[str] = set()
        for binding in bindings:
            if not isinstance(binding, Binding) or not binding.id or binding.id in seen:
                continue
            seen.add(binding.id)
            key = self._keymap.get(binding.id, binding.key)
            shown = self.get_key_display(Binding(key, binding.action, binding.description))
            rows.append((shown, binding.description, binding.id))
        rows.append(("ctrl+p", "Command palette", "(textual)"))
        self.push_screen(HelpScreen(rows))

    # -- one frame ---------------------------------------------------------------------------

    async def snap(self, pilot: Pilot[str | None]) -> None:
        """Autopilot of ``--once``: let the first frame settle, then exit with it."""
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        self.exit(self.export_svg() if self.once == "svg" else self.export_text())

    def export_text(self) -> str:
        """The current frame as plain text (export_screenshot's rendering, as text)."""
        width, height = self.size
        console = Console(
            width=width,
            height=height,
            file=io.StringIO(),
            record=True,
            legacy_windows=False,
            safe_box=False,
            color_system=None,
        )
        console.print(self.screen._compositor.render_update(full=True))
        lines = console.export_text().splitlines()
        return "\n".join(line.rstrip() for line in lines) + "\n"

    def export_svg(self) -> str:
        return self.export_screenshot()
