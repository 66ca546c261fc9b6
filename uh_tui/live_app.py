"""The app's live side: one reader thread, the updates it hands the UI, the status line.

Data flows one way: a reader thread (``uh_tui.watch``) turns watcher batches and polls into
``Update``s; the UI thread only applies them (``LiveApp.apply``) to every live screen. Keys
and what they launch are the subclasses' (``uh_tui.launch_actions``, ``uh_tui.app``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import work
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen

from uh_core.clock import now
from uh_core.workspace.state import Snapshot, Update
from uh_core.workspace.store import Store
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


class LiveApp(App[str | None]):
    """The reader, the snapshot it keeps true, and what the status line says."""

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

    # -- what is shown ------------------------------------------------------------------------

    def main_screen(self) -> Screen[None] | None:
        for screen in reversed(self.screen_stack):
            if hasattr(screen, "selected_mission") and showing(screen):
                found: Screen[None] = screen
                return found
        return None

    def current_mission(self) -> str | None:
        screen = self.main_screen()
        return screen.selected_mission() if screen is not None else None  # type: ignore[attr-defined]

    def dashboard(self) -> DashboardScreen | None:
        return next((s for s in self.screen_stack if isinstance(s, DashboardScreen)), None)

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

    def start(self, launch: Launch) -> None:
        """Launch ``launch`` (``on_start``'s launches too): ``uh_tui.launch_actions``."""
        raise NotImplementedError
