"""The ``uh`` app: live views over what uh_core writes, and keys that launch ``uh-core``.

Data flows one way: a reader thread (``uh_tui.watch``) turns watcher batches and polls into
``Update``s; the UI thread only applies them. Keys start ``uh-core`` subprocesses through
``uh_tui.launch`` in thread workers; what those commands do arrives through the event log.
"""

from __future__ import annotations

import contextlib
import gc
import io
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text
from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.pilot import Pilot
from textual.screen import ModalScreen, Screen

from uh_core.clock import now
from uh_core.workspace.state import Snapshot, Update
from uh_core.workspace.store import Store
from uh_tui import launch as launches
from uh_tui.commands import UhCommands
from uh_tui.keymap import load_keymap, unknown_ids
from uh_tui.launch import Launch, Launcher, LauncherLike, LaunchResult
from uh_tui.screens.dashboard import DashboardScreen
from uh_tui.screens.live import LiveScreen, showing
from uh_tui.screens.no_harness import NoHarnessScreen
from uh_tui.watch import POLL_S, LiveReader, Mailbox
from uh_tui.widgets.event_pane import EventPane
from uh_tui.widgets.status_line import StatusLine

if TYPE_CHECKING:  # the screens not shown first are imported when first opened
    from uh_tui.screens.messages import Note

MISSION_ACTIONS = {"verify", "run", "run_all", "cancel", "review"}
LAUNCH_ACTIONS = MISSION_ACTIONS | {"harness", "discard", "filter"}


def _settle_memory() -> None:
    """Once the first frame is up: collect, then freeze what exists (Textual's widgets,
    uh_core's models, the first snapshot) out of the cyclic collector's sight. Without it
    a full collection walks all of it every few seconds, a 60–100 ms pause in the middle
    of a live stream (see benchmarks/tui_latency.py)."""
    gc.collect()
    gc.freeze()


class DataArrived(Message):
    """The reader left an update in the mailbox."""


class WatchWarning(Message):
    def __init__(self, warning: str | None) -> None:
        super().__init__()
        self.warning = warning


class UhApp(App[str | None]):
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
        Binding("m", "messages", "Messages", id="app.messages"),
        Binding("ctrl+r", "reload", "Reload", id="app.reload", show=False),
    ]

    def __init__(
        self,
        root: Path,
        *,
        once: str | None = None,
        view: str = "missions",
        mission: str | None = None,
        launcher: LauncherLike | None = None,
        live: bool = True,
        poll_s: float = POLL_S,
        on_start: Sequence[Launch] = (),
        keymap: dict[str, str] | None = None,
    ) -> None:
        super().__init__()
        self.root = root
        self.once = once  # "text" or "svg": render one frame, then exit with it
        self.initial_view = view
        self.initial_mission = mission
        self.launcher: LauncherLike = launcher or Launcher()
        self.live = live
        self.poll_s = poll_s
        self.on_start = list(on_start)
        self.keymap_override = keymap
        self.snapshot = Snapshot(root, loaded=False)
        self.launching: dict[str, str] = {}  # target → action, while the process runs
        self.in_flight: list[Launch] = []  # launched and not ended, oldest first
        self.launch_errors: dict[str, str] = {}  # target → why its launch failed
        self.results: list[LaunchResult] = []
        self.status_text = Text("")
        self.messages: list[Note] = []  # everything the status line said, oldest first
        self.warning: str | None = None
        self.data_ready = threading.Event()
        self.updates = 0
        self._stop = threading.Event()
        self._mailbox = Mailbox(lambda: self.post_message(DataArrived()))
        self._reader: LiveReader | None = None
        self._keymap: dict[str, str] = {}
        self._showing = ""  # "dashboard" | "no-harness": the screen asked for last
        self._had_selection = False

    # -- start and stop -------------------------------------------------------------------

    def on_mount(self) -> None:
        keymap, problems = (
            load_keymap()
            if self.keymap_override is None
            else (
                self.keymap_override,
                [],
            )
        )
        self._keymap = keymap
        if keymap:
            self.set_keymap(keymap)
        if keymap:  # every screen's bindings are known only once all are imported
            known = [b.id for b in self.all_bindings() if b.id]
            problems = [*problems, *unknown_ids(keymap, known)]
        if problems:
            self.warn("; ".join(problems))
        # The first read happens here, before the first frame (a big log is opened at its
        # end: tens of milliseconds), so that frame already shows the newest events; the
        # reader thread then carries on from this store.
        store = Store(self.root)
        first = store.full()
        if first is not None:
            self.snapshot = first.snapshot
        if self.once is not None:
            self._open_first_screen(first.events if first else ())
            return
        self._open_first_screen(())
        if first is not None:
            self.apply(first)
        self._reader = LiveReader(
            store,
            self._mailbox,
            lambda warning: self.post_message(WatchWarning(warning)),
            watch=self.live,
            poll_s=self.poll_s,
        )
        # The reader thread starts once the first frame is out: its first look and the
        # history fold would otherwise take the GIL from that frame's compose and layout.
        self.call_after_refresh(self._read)
        for item in self.on_start:
            self.start(item)

    def _open_first_screen(self, events: tuple) -> None:  # type: ignore[type-arg]
        if (self.snapshot.loaded and not self.snapshot.has_harness) or (
            not self.snapshot.loaded and not (self.root / ".harness").is_dir()
        ):
            self._showing = "no-harness"
            self.push_screen(NoHarnessScreen(self.root))
        else:
            self._showing = "dashboard"
            screen = DashboardScreen(
                self.snapshot, view=self.initial_view, mission=self.initial_mission
            )
            screen.pending_events.extend(events)
            self.push_screen(screen)

    @work(thread=True, group="reader", name="event reader")
    def _read(self) -> None:
        assert self._reader is not None
        self._reader.run(self._stop)

    def on_unmount(self) -> None:
        self._stop.set()
        self.launcher.release(cancel=False)  # however the app ends, no launch holds it

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

    def _leave(self, *, cancel: bool) -> None:
        """Stop reading, let go of every launch (cancelled or left running), and exit: the
        launch threads return within ``Launcher.poll_s``, so nothing holds the exit."""
        self._stop.set()
        self.launcher.release(cancel=cancel)
        self.exit()

    # -- updates from the reader ------------------------------------------------------------

    def on_data_arrived(self, _: DataArrived) -> None:
        update = self._mailbox.take()
        if update is not None and self.is_running:
            self.apply(update)

    def on_watch_warning(self, message: WatchWarning) -> None:
        self.warn(message.warning)

    def apply(self, update: Update) -> None:
        self.snapshot = update.snapshot
        self.updates += 1
        if not self.snapshot.has_harness:
            if self._showing != "no-harness":
                self._showing = "no-harness"
                self._replace_all(NoHarnessScreen(self.root))
            self.data_ready.set()
            return
        if self._showing != "dashboard":
            self._showing = "dashboard"
            self._replace_all(
                DashboardScreen(self.snapshot, view=self.initial_view, mission=self.initial_mission)
            )
        for screen in self.screen_stack:
            if not isinstance(screen, LiveScreen):
                continue  # a modal (help, confirm, picker): it shows nothing live
            if not screen.ready:
                if isinstance(screen, DashboardScreen):
                    screen.snapshot = self.snapshot
                    screen.pending_events.extend(update.events)
                continue
            if not showing(screen):
                continue  # being removed: its widgets are gone
            screen.show(self.snapshot)
            if update.events:
                screen.add_events(update.events)
        selected = self.current_mission() is not None
        if selected != self._had_selection:
            self._had_selection = selected
            self.refresh_bindings()  # the mission keys are enabled only with a mission
        if update.reset:
            for screen in filter(showing, self.screen_stack):
                for pane in screen.query(EventPane):
                    logs = ", ".join(update.reset)
                    pane.note(f"re-read from the start (replaced or truncated): {logs}")
        if not self.data_ready.is_set():
            self.call_after_refresh(_settle_memory)
        self.data_ready.set()

    def _replace_all(self, screen: Screen[None]) -> None:
        """Make ``screen`` the only one above Textual's default screen."""
        while len(self.screen_stack) > 2:
            self.pop_screen()
        if len(self.screen_stack) == 2:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def refresh_views(self) -> None:
        if not self.is_running:
            return  # shutting down: the screens are being removed
        for screen in self.screen_stack:
            if isinstance(screen, LiveScreen) and showing(screen):
                screen.show(self.snapshot)

    def action_reload(self) -> None:
        if self._reader is not None:
            self._reader.inbox.put({self.root / ".harness"})

    # -- the status line --------------------------------------------------------------------

    def say(self, message: Text, result: LaunchResult | None = None) -> None:
        """The status line shows the start of ``message``; the message log keeps all of
        it (and ``result``'s command and output)."""
        from uh_tui.screens.messages import Note

        self.status_text = message
        self._note(Note(now().strftime("%H:%M:%S"), message, result))
        for line in self._status_lines():
            line.say(message)

    def warn(self, warning: str | None) -> None:
        from uh_tui.screens.messages import Note

        if warning and warning != self.warning:
            self._note(Note(now().strftime("%H:%M:%S"), Text(f"⚠ {warning}", style="yellow")))
        self.warning = warning
        for line in self._status_lines():
            line.warn(warning)

    def _note(self, note: Note) -> None:
        from uh_tui.screens.messages import MessagesScreen

        self.messages.append(note)
        for screen in self.screen_stack:
            if isinstance(screen, MessagesScreen) and screen.is_running and screen.is_attached:
                screen.add(note)

    def key_display(self, binding_id: str, default: str) -> str:
        """How the key bound to ``binding_id`` is shown (after any remapping)."""
        key = self._keymap.get(binding_id, default)
        return self.get_key_display(Binding(key, "", ""))

    def action_messages(self) -> None:
        from uh_tui.screens.messages import MessagesScreen

        if not isinstance(self.screen, MessagesScreen):
            self.push_screen(MessagesScreen(self.messages))

    def _status_lines(self) -> list[StatusLine]:
        lines: list[StatusLine] = []
        for screen in filter(showing, self.screen_stack):
            lines.extend(screen.query(StatusLine))
        return lines

    # -- what the keys act on ---------------------------------------------------------------

    def main_screen(self) -> Screen[None] | None:
        for screen in reversed(self.screen_stack):
            if hasattr(screen, "selected_mission") and showing(screen):
                found: Screen[None] = screen
                return found
        return None

    def current_mission(self) -> str | None:
        screen = self.main_screen()
        return screen.selected_mission() if screen is not None else None  # type: ignore[attr-defined]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in LAUNCH_ACTIONS:
            if isinstance(self.screen, ModalScreen) or not self.snapshot.has_harness:
                return False
            if action in MISSION_ACTIONS and not self.current_mission():
                return None
        return True

    # -- launching ---------------------------------------------------------------------------

    def start(self, launch: Launch) -> None:
        key = launch.target or launch.action
        self.launch_errors.pop(key, None)
        self.launching[key] = launch.action
        self.in_flight.append(launch)
        self.say(Text(f"▶ {launch.command}", style="cyan"))
        self.refresh_views()
        self._launch(launch)

    @work(thread=True, group="launch")
    def _launch(self, launch: Launch) -> None:
        result = self.launcher.launch(launch)
        with contextlib.suppress(RuntimeError):  # the app has gone (it quit, leaving it running)
            self.call_from_thread(self._launched, result)

    def _launched(self, result: LaunchResult) -> None:
        launch = result.launch
        key = launch.target or launch.action
        self.launching.pop(key, None)
        if launch in self.in_flight:
            self.in_flight.remove(launch)
        self.results.append(result)
        if not self.is_running:
            return  # it ended while the app shuts down: no screen to tell
        if result.error:
            self.launch_errors[key] = result.error
            self.say(Text(f"✗ {launch.title}: {result.error}", style="bold red"), result)
        else:
            note = f": {result.message}" if result.message else ""
            ended = f"■ {launch.title} ended (exit {result.returncode}){note}"
            self.say(Text(ended, style="dim"), result)
        self.refresh_views()
        self.action_reload()

    def action_verify(self) -> None:
        mission = self.current_mission()
        if mission:
            self.start(launches.verify(self.root, mission))

    def action_run(self) -> None:
        from uh_tui.screens.picker import PickerScreen

        mission = self.current_mission()
        if not mission:
            return
        options = [
            (
                option.id,
                f"{option.id:<14} {option.kind or '?':<10} {option.status}"
                + (f"  ⚠ {option.problem}" if option.problem else ""),
                option.problem is None,
            )
            for option in self.snapshot.runtimes
        ]
        if not options:
            self.say(Text("no runtimes: add a manifest in .harness/adapters/", style="bold red"))
            return

        def chosen(runtime: str | None) -> None:
            if runtime:
                self.start(launches.run(self.root, mission, runtime))

        self.push_screen(PickerScreen(f"Run {mission} on which runtime?", options), chosen)

    def action_run_all(self) -> None:
        mission = self.current_mission()
        if mission:
            self.start(launches.run_all(self.root, mission))

    def action_harness(self) -> None:
        self.start(launches.harness_run(self.root))

    def harness_only(self, mission: str) -> None:
        self.start(launches.harness_run(self.root, "--req", mission))

    def action_cancel(self) -> None:
        """``c``: stop what the selection is running — its harness run (a harness row, or a
        mission the harness is working on), else the mission's own run."""
        run_id = self.harness_run_to_cancel()
        if run_id is not None:
            self.start(launches.harness_cancel(self.root, run_id))
            return
        mission = self.current_mission()
        if mission:
            self.start(launches.cancel(self.root, mission))

    def harness_run_to_cancel(self) -> str | None:
        """The harness run ``c`` stops, from the snapshot (the audit log's
        ``harness.run.started``): "" when one is in progress but its id is not known yet;
        None when ``c`` is for the mission's own run (a runtime, a verify)."""
        mission_id = self.current_mission()
        board = self.dashboard()
        harness = self.snapshot.harness
        if board is not None and self.main_screen() is board and board.view == "harness":
            row = next((r for r in harness.requirements if r.mission_id == mission_id), None)
            if row is None or row.outcome != "running":
                return None
            return row.run_id or harness.running or ""
        mission = self.snapshot.mission(mission_id)
        if mission is None or mission.harness is None or mission.harness.status != "running":
            return None
        if any(r.status == "running" for r in mission.runtimes):
            return None  # a runtime run of its own: mission cancel stops that
        return mission.harness.run_id or harness.running or ""

    def action_discard(self) -> None:
        from uh_tui.screens.picker import PickerScreen

        screen = self.main_screen()
        sandbox = screen.selected_sandbox() if screen is not None else None  # type: ignore[attr-defined]
        if sandbox:
            self.confirm_discard(sandbox)
            return
        mission = self.current_mission()
        sandboxes = [s for s in self.snapshot.sandboxes if s.mission_id == mission] or list(
            self.snapshot.sandboxes
        )
        if not sandboxes:
            self.say(Text("no sandboxes to discard", style="dim"))
            return
        options = [
            (s.id, f"{s.id}  {s.runtime or '-'}" + ("  (in use)" if s.in_use else ""), True)
            for s in sandboxes
        ]

        def chosen(sandbox_id: str | None) -> None:
            if sandbox_id:
                self.confirm_discard(sandbox_id)

        self.push_screen(PickerScreen("Discard which sandbox?", options), chosen)

    def action_review(self) -> None:
        """``p``: review what the selected runtime (its sandbox), harness row (its
        ``harness/<id>`` branch) or sandbox produced; elsewhere the mission's only candidate."""
        from uh_tui.screens.review import ReviewScreen
        from uh_tui.screens.runtime import RuntimeScreen

        if isinstance(self.screen, ReviewScreen):
            return
        mission = self.current_mission()
        if not mission:
            return
        sandbox: str | None = None
        branch: str | None = None
        screen = self.main_screen()
        board = self.dashboard()
        if isinstance(screen, RuntimeScreen):
            sandbox = screen.selected_sandbox()
        elif screen is board and board is not None:
            if board.view == "harness":
                branch = f"harness/{mission}"
            elif board.view in ("runtimes", "sandboxes"):
                sandbox = board.selected_sandbox()
        self.push_screen(ReviewScreen(self.snapshot, mission, sandbox_id=sandbox, branch=branch))

    def confirm_discard(self, sandbox_id: str) -> None:
        from uh_tui.screens.confirm import ConfirmScreen

        found = next((s for s in self.snapshot.sandboxes if s.id == sandbox_id), None)
        detail = f"{found.worktree} and its index entry are removed." if found else ""
        if found and found.in_use:
            detail += " It is in use by a running run: uh-core will refuse."

        def answered(yes: bool | None) -> None:
            if yes:
                self.start(launches.discard(self.root, sandbox_id))

        self.push_screen(
            ConfirmScreen(f"Discard sandbox {sandbox_id}?", detail, yes="Discard", no="Keep"),
            answered,
        )

    # -- navigation --------------------------------------------------------------------------

    def dashboard(self) -> DashboardScreen | None:
        return next((s for s in self.screen_stack if isinstance(s, DashboardScreen)), None)

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

    def all_bindings(self) -> list[Binding]:
        """Every binding of the app and its screens (each has an id to remap it by)."""
        from uh_tui.screens.confirm import ConfirmScreen
        from uh_tui.screens.help import HelpScreen
        from uh_tui.screens.messages import MessagesScreen
        from uh_tui.screens.mission import MissionScreen
        from uh_tui.screens.picker import PickerScreen
        from uh_tui.screens.quit import QuitScreen
        from uh_tui.screens.review import ReviewScreen
        from uh_tui.screens.runtime import RuntimeScreen

        found: list[Binding] = []
        for owner in (
            self,
            DashboardScreen,
            MissionScreen,
            RuntimeScreen,
            ReviewScreen,
            MessagesScreen,
            HelpScreen,
            QuitScreen,
            ConfirmScreen,
            PickerScreen,
        ):
            found.extend(b for b in owner.BINDINGS if isinstance(b, Binding))
        return found

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
