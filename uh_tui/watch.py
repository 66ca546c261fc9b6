"""Live updates: watchfiles on ``.harness/`` (never the sandboxes' worktrees), a slow safety
poll, and one reader thread that owns the ``Store`` and hands batches to the UI.

Tuning (see docs/dashboard.md): watchfiles reports a batch once no *new* path joined it
for one ``step``, or when ``debounce`` has passed since the batch's first change. An
appending log is one path, so a batch closes one to two steps after an append: with
``STEP_MS = 5`` the watcher adds 5–10 ms, where its defaults (50 ms step, 1600 ms
debounce) add 50–100 ms and, under a steady stream of changes to many files, up to 1.6 s.
A log the watcher reported is then *hot*: the reader itself looks at its size every
``HOT_POLL_S`` (2 ms) while it grows and reads an append as soon as it sees it, so a live
stream does not wait for the watcher's next batch (``HotLogs``).

What is watched: ``missions/``, ``audit/``, ``runs/`` and ``adapters/`` recursively, and
``.harness/`` and ``.harness/sandboxes/`` flat (the index, and folders appearing). Never a
sandbox's worktree: a recursive watch there would follow every file an agent touches.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import watchfiles

from uh_core.workspace.state import Update
from uh_core.workspace.store import PANE_LINES, Store

DEBOUNCE_MS = 20
STEP_MS = 5
POLL_S = 2.0  # safety poll: a full look this often, whatever the watcher reported
FAST_POLL_S = 0.5  # the same while the watcher is down
RETRY_S = 5.0  # how often a failed watcher is started again
SYNC_SETTLE_S = 0.5  # after a watcher starts on a new folder: a full look this much later
RECURSIVE = ("missions", "audit", "runs", "adapters")
FLAT = ("", "sandboxes")
LOG_NAME = "events.ndjson"  # every event log's name (missions/<id>/, audit/)
HOT_POLL_S = 0.002  # a log being appended to: the reader looks at it this often itself…
# …until it has not grown for this long: a log written less often than this is served by
# the watcher (5–10 ms), and polling it in between would wake the reader 500 times a second
HOT_FOR_S = 0.2


@dataclass(frozen=True)
class WatchError:
    message: str


class _Watcher(threading.Thread):
    def __init__(self, paths: list[Path], recursive: bool, out: queue.SimpleQueue[object]):
        super().__init__(name=f"uh-watch-{'deep' if recursive else 'flat'}", daemon=True)
        self.paths = paths
        self.recursive = recursive
        self.out = out
        self.stop_event = threading.Event()

    def run(self) -> None:
        try:
            for changes in watchfiles.watch(
                *self.paths,
                watch_filter=None,
                debounce=DEBOUNCE_MS,
                step=STEP_MS,
                stop_event=self.stop_event,
                recursive=self.recursive,
                raise_interrupt=False,
                ignore_permission_denied=True,
            ):
                self.out.put({Path(path) for _change, path in changes})
        except Exception as exc:  # the watcher's own failure: report it, keep the app up
            if not self.stop_event.is_set():
                self.out.put(WatchError(f"file watcher stopped: {exc}"))

    def stop(self) -> None:
        self.stop_event.set()


class Watchers:
    """The two watchers over one ``.harness/``; ``sync()`` follows folders appearing."""

    def __init__(self, harness: Path, out: queue.SimpleQueue[object]) -> None:
        self.harness = harness
        self.out = out
        self._deep: _Watcher | None = None
        self._flat: _Watcher | None = None
        self._deep_paths: list[Path] = []

    def _existing(self, names: Iterable[str]) -> list[Path]:
        paths = [self.harness / name if name else self.harness for name in names]
        return [path for path in paths if path.is_dir()]

    def start(self) -> None:
        self._flat = self._spawn(self._existing(FLAT), recursive=False)
        self._deep_paths = self._existing(RECURSIVE)
        self._deep = self._spawn(self._deep_paths, recursive=True)

    def _spawn(self, paths: list[Path], recursive: bool) -> _Watcher | None:
        if not paths:
            return None
        watcher = _Watcher(paths, recursive, self.out)
        watcher.start()
        return watcher

    def sync(self) -> bool:
        """Watch folders that appeared since (``runs/`` after the first harness run); True
        when a new watcher was started."""
        paths = self._existing(RECURSIVE)
        if paths == self._deep_paths:
            return False
        if self._deep is not None:
            self._deep.stop()
        self._deep_paths = paths
        self._deep = self._spawn(paths, recursive=True)
        return True

    def stop(self) -> None:
        for watcher in (self._deep, self._flat):
            if watcher is not None:
                watcher.stop()
        self._deep = self._flat = None


class Mailbox:
    """Hands updates to the UI without blocking the reader: an update the UI has not taken
    yet is merged with the next (latest snapshot, event lines appended, newest kept)."""

    def __init__(self, wake: Callable[[], object]) -> None:
        self._wake = wake
        self._lock = threading.Lock()
        self._pending: Update | None = None

    def put(self, update: Update) -> None:
        with self._lock:
            waiting = self._pending
            if waiting is None:
                self._pending = update
            else:
                events = waiting.events + update.events
                dropped = waiting.dropped + update.dropped + max(len(events) - PANE_LINES, 0)
                self._pending = Update(
                    update.snapshot,
                    events[-PANE_LINES:],
                    dropped,
                    waiting.reset + update.reset,
                )
        if waiting is None:
            self._wake()

    def take(self) -> Update | None:
        with self._lock:
            update, self._pending = self._pending, None
        return update

    @property
    def holding(self) -> bool:
        """True while an update waits for the UI to take it."""
        return self._pending is not None


_StatKey = tuple[int, int, int] | None


def _stat_key(path: Path) -> _StatKey:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns)


class HotLogs:
    """The event logs being appended to, looked at by the reader itself every
    ``HOT_POLL_S`` while they grow: an append is read about a millisecond after it lands,
    where waiting for the watcher's batch costs one to two ``STEP_MS`` (5–10 ms) plus a
    hop between threads. A log turns hot when the watcher reports it and cools down after
    ``HOT_FOR_S`` without growing; the watcher still reports every change.

    Each log's stat (inode, size, mtime) is noted *before* it is read, so a batch naming a
    log that is already read to that stat is dropped (at 200 appends a second most batches
    would otherwise re-read what the poll already read), and an append that lands during
    a read changes the stat and is read next time.
    """

    def __init__(self) -> None:
        self._read_at: dict[Path, _StatKey] = {}  # each log's stat when it was last read
        self._grew: dict[Path, float] = {}  # hot logs: when each last grew
        self._next = 0.0  # when to look at the hot logs again

    def wait(self, now: float) -> float | None:
        """Seconds until the hot logs are due for a look; None when none is hot."""
        return max(self._next - now, 0.0) if self._grew else None

    def fresh(self, reported: set[Path], now: float) -> set[Path]:
        """The paths to read now: what the watcher reported, less logs read to their
        current stat, plus hot logs that grew."""
        out: set[Path] = set()
        for path in reported:
            if path.name != LOG_NAME:
                out.add(path)
                continue
            self._grew[path] = now
            if self._changed(path):
                out.add(path)
        if self._grew and now >= self._next:
            self._next = now + HOT_POLL_S
            for path, grew in list(self._grew.items()):
                if path in reported:
                    continue
                if self._changed(path):
                    out.add(path)
                    self._grew[path] = now
                elif now - grew > HOT_FOR_S:
                    del self._grew[path]
        return out

    def _changed(self, path: Path) -> bool:
        key = _stat_key(path)
        if key is not None and key == self._read_at.get(path):
            return False
        self._read_at[path] = key
        return True


class LiveReader:
    """The reader thread's loop: watcher batches and polls in, ``Update``s out."""

    def __init__(
        self,
        store: Store,
        publish: Mailbox | Callable[[Update], None],
        warn: Callable[[str | None], object],
        *,
        watch: bool = True,
        poll_s: float = POLL_S,
    ) -> None:
        self.store = store
        self.warn = warn
        self.watch = watch
        self.poll_s = poll_s
        self.inbox: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.watchers: Watchers | None = None
        self.failed_at: float | None = None
        self.hot = HotLogs()
        # Handing updates to a Mailbox (the app does), the reader reads nothing while the
        # UI has not taken the last one: that read would only be merged into it, and its
        # CPU (and the GIL) is what a UI falling behind lacks. Reported paths wait for it.
        self.mailbox = publish if isinstance(publish, Mailbox) else None
        self.publish: Callable[[Update], None] = (
            publish.put if isinstance(publish, Mailbox) else publish
        )

    def _start_watchers(self) -> None:
        if not self.watch or self.watchers is not None:
            return
        if not self.store.layout.harness.is_dir():
            return
        self.watchers = Watchers(self.store.layout.harness, self.inbox)
        try:
            self.watchers.start()
        except Exception as exc:  # e.g. out of inotify watches
            self._watch_failed(f"file watcher did not start: {exc}")

    def _watch_failed(self, message: str) -> None:
        if self.watchers is not None:
            self.watchers.stop()
        self.watchers = None
        self.failed_at = time.monotonic()
        self.warn(f"{message} — polling every {FAST_POLL_S:g} s")

    def run(self, stop: threading.Event) -> None:
        store = self.store
        self._emit(store.full())
        self._start_watchers()
        last_full = time.monotonic()
        held: set[Path] = set()  # reported while the UI was behind: read once it caught up
        try:
            while not stop.is_set():
                now = time.monotonic()
                interval = FAST_POLL_S if self.failed_at is not None else self.poll_s
                wait = 0.0 if store.busy else max(last_full + interval - now, 0.0)
                behind = self.mailbox is not None and self.mailbox.holding
                hot = HOT_POLL_S if behind else self.hot.wait(now)
                paths, errors = self._receive(min(wait, 0.25, 1.0 if hot is None else hot))
                if stop.is_set():
                    break
                if errors:
                    self._watch_failed(errors[-1])
                if self.failed_at is not None and time.monotonic() - self.failed_at > RETRY_S:
                    self.failed_at = None
                    self.warn(None)
                    self._start_watchers()
                if behind and self.mailbox is not None and self.mailbox.holding:
                    held |= paths
                    paths = set()
                else:
                    paths, held = self.hot.fresh(paths | held, time.monotonic()), set()
                if paths:
                    self._emit(store.changed(paths))
                    if (
                        self.watchers is not None
                        and any(p.parent == store.layout.harness for p in paths)
                        and self.watchers.sync()
                    ):
                        # a watcher just started on a new folder: what was written there
                        # before it was up is seen by a full look once it is
                        last_full = time.monotonic() - interval + SYNC_SETTLE_S
                if time.monotonic() - last_full >= interval:
                    self._emit(store.full())
                    last_full = time.monotonic()
                    if self.watchers is None and self.failed_at is None:
                        self._start_watchers()  # .harness/ appeared
                if store.busy:
                    self._emit(store.more())
        finally:
            if self.watchers is not None:
                self.watchers.stop()

    def _receive(self, wait: float) -> tuple[set[Path], list[str]]:
        paths: set[Path] = set()
        errors: list[str] = []
        try:
            item = self.inbox.get(timeout=wait) if wait > 0 else self.inbox.get_nowait()
        except queue.Empty:
            return paths, errors
        while True:
            if isinstance(item, WatchError):
                errors.append(item.message)
            elif isinstance(item, set):
                paths |= item
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                return paths, errors

    def _emit(self, update: Update | None) -> None:
        if update is not None:
            self.publish(update)
