"""Everything under ``.harness/`` as one ``Snapshot``, kept current cheaply.

A ``Store`` keeps one ``LogFeed`` per event log (opened at its end, followed by byte
offset, folded in order) and a stat-keyed cache of every YAML/JSON document, so a refresh
re-reads only files that changed. ``full()`` looks at everything (start, safety poll);
``changed(paths)`` only at what a watcher reported; ``more()`` continues long reads. Each
returns an ``Update`` (the snapshot plus new event lines) or None when nothing changed.

Not thread-safe: one thread owns a store (the dashboard's reader thread). Every path comes
from ``Layout``; every file is parsed by uh_core's models and readers; a file that does
not read is a problem on its row, never an exception.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from uh_core.events.fold import AuditFold, MissionFold
from uh_core.events.reader import LogTail, seen_before
from uh_core.follow import tail_start
from uh_core.layout import Layout
from uh_core.models.events import Owner
from uh_core.procid import Probe
from uh_core.workspace import twocores
from uh_core.workspace.feed import BIG_LOG, TAIL_LINES, LogFeed, event_line
from uh_core.workspace.files import FileCache
from uh_core.workspace.harness_view import harness_view, registered_owners
from uh_core.workspace.index import Index, open_index
from uh_core.workspace.ledger_rows import LedgerRows
from uh_core.workspace.ledger_view import Ledgers, read_ledgers
from uh_core.workspace.mission_rows import KIND as MISSION_ROWS
from uh_core.workspace.mission_rows import MissionRows, listing
from uh_core.workspace.mission_view import mission_view
from uh_core.workspace.project_view import runtime_options, sandbox_views, sandboxes_in_use
from uh_core.workspace.state import (
    EventLine,
    MissionView,
    RuntimeOption,
    SandboxView,
    Snapshot,
    Update,
)

PANE_LINES = 500  # newest event lines handed on per update
FIRST_ROWS = 120  # missions derived from their files before the first frame (a window's worth)
FIRST_S = 0.3  # ledgers derived from their files before the first frame
STEP_S = 0.1  # each later step of either


class Store:
    def __init__(
        self,
        root: Path,
        *,
        tail_lines: int = TAIL_LINES,
        big_log: int = BIG_LOG,
        index: bool = True,
    ):
        self.layout = Layout(root)
        self.cache = FileCache()
        self.use_index = index  # the derived index (uh_core.workspace.index): off in tests
        self.index: Index | None = None
        self.rows = MissionRows(self.layout, None)
        self.ledger_rows = LedgerRows(self.layout, None)
        self._keys: dict[str, str] = {}  # mission → its files' signature when its row was made
        self.pane = True  # event lines wanted (the dashboard); settle() wants the rows only
        self._later: list[str] = []  # missions whose rows come after the first frame
        self._derived = 0
        self.tail_lines = tail_lines
        self.big_log = big_log
        self.feeds: dict[str, LogFeed[MissionFold]] = {}
        self.audit: LogFeed[AuditFold] | None = None
        self.active: dict[str, frozenset[str]] = {}
        self.views: dict[str, MissionView] = {}
        self.snapshot = Snapshot(self.layout.root, has_harness=self.layout.harness.is_dir())
        self._sandboxes: tuple[tuple[SandboxView, ...], str | None] = ((), None)
        self._runtimes: tuple[RuntimeOption, ...] = ()
        self._ledgers = Ledgers()
        self._owners: dict[str, Owner] = {}  # harness runs' registered runners
        self.probe = Probe()  # liveness of running states' owners: new for each refresh
        self._seen: set[str] = set()  # events written to two logs (promotions): shown once

    # -- the entry points ------------------------------------------------------------------

    def full(self, ids: list[str] | None = None) -> Update | None:
        """Look at everything (from the cache where a file is unchanged); ``ids``: the
        missions as the caller listed them a moment ago (else listed here)."""
        layout = self.layout
        self.probe = Probe()
        if not layout.harness.is_dir():
            changed = self.snapshot.has_harness or not self.snapshot.loaded
            self.snapshot = Snapshot(layout.root, has_harness=False, loaded=True)
            return Update(self.snapshot) if changed else None
        self._open_index()
        ids = layout.mission_ids() if ids is None else ids
        for gone in set(self.feeds) - set(ids):
            del self.feeds[gone]
        for gone in set(self.views) - set(ids):
            self.views.pop(gone, None)
            self.active.pop(gone, None)
        events: list[EventLine] = []
        resets: list[str] = []
        deferred: list[str] = []
        self._derived = 0  # rows derived from files in this call (FIRST_ROWS, then later)
        missions = layout.missions_path
        for mission_id in ids:
            # one listing of its folder: which of its files exist (the row's signature), and
            # whether a run registered itself (most missions have no active/ folder)
            mdir = os.path.join(missions, mission_id)
            present = listing(mdir) if mission_id not in self.feeds else None
            registered = (present is None or "active" in present) and os.path.isdir(
                os.path.join(mdir, "active")
            )
            in_use = sandboxes_in_use(self.layout, mission_id) if registered else frozenset()
            self.active[mission_id] = in_use
            if present is not None and self._from_index(mission_id, present):
                deferred.append(mission_id)
                continue
            if self._postpone(mission_id):
                deferred.append(mission_id)  # its log's newest lines still reach the pane
                continue
            new = mission_id not in self.feeds
            self._poll_feed(mission_id, events, resets)
            self._view(mission_id)
            self._derived += new
        if self.pane:
            self._newest_of(deferred, events)
        self._poll_audit(events, resets)
        self._sandboxes = self._read_sandboxes()
        self._runtimes = runtime_options(layout, self.cache)
        budget = FIRST_S if self.pane else None
        self._ledgers = read_ledgers(layout, self.ledger_rows, budget)
        self._owners = registered_owners(layout)
        return self._publish(events, resets)

    def changed(self, paths: Iterable[Path]) -> Update | None:
        """Refresh only what the reported paths touch; anything unexpected → ``full()``."""
        self.probe = Probe()
        missions: set[str] = set()
        logs: set[str] = set()
        audit = sandboxes = runtimes = ledgers = False
        harness_root = self.layout.harness
        for path in paths:
            try:
                parts = path.relative_to(harness_root).parts
            except ValueError:
                if path == harness_root or harness_root.is_relative_to(path):
                    return self.full()
                continue
            if not parts or ignored(parts):
                continue
            top = parts[0]
            if top == "missions":
                if len(parts) < 3 or parts[1] not in self.views:
                    return self.full()  # a mission appeared or went away
                if parts[2] == "events.ndjson":
                    logs.add(parts[1])
                else:
                    missions.add(parts[1])
            elif top == "audit":
                audit = True
            elif top == "runs":
                ledgers = True
            elif top == "sandboxes":
                sandboxes = True
            elif top == "adapters":
                runtimes = True
            elif len(parts) == 1 and top not in ("project.yaml", ".gitignore"):
                return self.full()  # a new top-level folder (runs/, audit/) or file
        events: list[EventLine] = []
        resets: list[str] = []
        for mission_id in logs:
            self._poll_feed(mission_id, events, resets)
        for mission_id in missions:
            self.active[mission_id] = sandboxes_in_use(self.layout, mission_id)
        for mission_id in logs | missions:
            self._view(mission_id)
        if audit:
            self._poll_audit(events, resets)
        if sandboxes or missions or ledgers:  # runs/active/: a harness run holds its sandbox
            self._sandboxes = self._read_sandboxes()
        if runtimes:
            self._runtimes = runtime_options(self.layout, self.cache)
        if ledgers:
            budget = STEP_S if self.pane else None  # a first start's ledgers: more() goes on
            self._ledgers = read_ledgers(self.layout, self.ledger_rows, budget)
            self._owners = registered_owners(self.layout)
        return self._publish(events, resets)

    def more(self) -> Update | None:
        """Continue long reads: rows left for after the first frame, appended bytes beyond
        the last chunk, then history."""
        self.probe = Probe()
        events: list[EventLine] = []
        resets: list[str] = []
        touched = self._step_later()
        for mission_id, feed in self.feeds.items():
            if feed.more:
                self._poll_feed(mission_id, events, resets)
                self._view(mission_id)
                touched = True
        if self.audit is not None and self.audit.more:
            self._poll_audit(events, resets)
            touched = True
        if not touched:
            for mission_id, feed in self.feeds.items():
                if feed.history is not None:
                    feed.step_history()
                    self._view(mission_id)
                    break
            else:
                if self.audit is not None and self.audit.history is not None:
                    self.audit.step_history()
        return self._publish(events, resets)

    def _postpone(self, mission_id: str) -> bool:
        """In the dashboard, past a window's worth of rows derived from files: this one
        shows ``reading`` until ``more()`` reaches it (its signature kept for the pane)."""
        if not self.pane or self._derived < FIRST_ROWS or mission_id in self.feeds:
            return False
        if mission_id not in self._later:
            self._later.append(mission_id)
        self.views[mission_id] = MissionView(mission_id, catching_up=0.0)
        self._keys[mission_id] = self.rows.signature(mission_id)
        return True

    def _step_later(self) -> bool:
        """Rows left for after the first frame: derive them for about ``STEP_S``; ledgers
        too. True when it did anything."""
        if not self._later and not self.ledger_rows.pending:
            return False
        deadline = time.monotonic() + STEP_S
        ignored: list[EventLine] = []  # their newest lines reached the pane already
        resets: list[str] = []
        while self._later:  # at least one a step
            mission_id = self._later.pop(0)
            if mission_id in self.views and mission_id not in self.feeds:
                self._poll_feed(mission_id, ignored, resets)
                self._view(mission_id)
            if time.monotonic() >= deadline:
                return True
        if self.ledger_rows.pending:  # at least one ledger a step
            self._ledgers = read_ledgers(self.layout, self.ledger_rows, STEP_S)
        return True

    @property
    def busy(self) -> bool:
        """True while a long read is unfinished (call ``more()`` again soon)."""
        feeds: list[LogFeed[MissionFold] | LogFeed[AuditFold]] = [*self.feeds.values()]
        if self.audit is not None:
            feeds.append(self.audit)
        if self._later or self.ledger_rows.pending:
            return True
        return any(feed.more or feed.history is not None for feed in feeds)

    def settle(self) -> Snapshot:
        """Read everything to the end (history included): the exact snapshot, for scripts."""
        self.pane = False
        self.full(self._first_read_on_two_cores())
        while self.busy:
            self.more()
        return self.snapshot

    # -- reading -----------------------------------------------------------------------------

    def _poll_feed(self, mission_id: str, out: list[EventLine], resets: list[str]) -> None:
        feed = self.feeds.get(mission_id)
        if feed is None:
            path = self.layout.mission_events(mission_id)
            feed = self.feeds[mission_id] = LogFeed(
                path, lambda: MissionFold(mission_id), tail_lines=self.tail_lines, big=self.big_log
            )
        events, reset = feed.poll()
        if reset:
            resets.append(self.layout.rel(feed.path))
        if not self.pane:
            return  # a script's snapshot (``settle``) has no event pane to fill
        out.extend(
            event_line(event, mission_id)
            for event in events[-PANE_LINES:]
            if not seen_before(event, self._seen)
        )

    def _poll_audit(self, out: list[EventLine], resets: list[str]) -> None:
        if self.audit is None:
            self.audit = LogFeed(
                self.layout.audit_log, AuditFold, tail_lines=self.tail_lines, big=self.big_log
            )
        events, reset = self.audit.poll()
        if reset:
            resets.append(self.layout.rel(self.audit.path))
        if not self.pane:
            return
        out.extend(
            event_line(event, "audit")
            for event in events[-PANE_LINES:]
            if not seen_before(event, self._seen)
        )

    def _first_read_on_two_cores(self) -> list[str] | None:
        """Missions the index does not know yet, many of them: derived on two cores (a
        helper fills the index with the ledgers' rows and its share of missions' rows, which
        ``full()`` then reads as stored; ``uh_core.workspace.twocores``). Returns the
        missions it listed, for ``full()`` (None when it listed none)."""
        if not self.layout.harness.is_dir():
            return None
        self._open_index()
        if self.index is None or not self.index.usable:
            return None
        ids = self.layout.mission_ids()
        if len(ids) - self.index.count(MISSION_ROWS) < twocores.MIN_KEYS:
            return ids
        root = self.layout.root
        ours = _Helper(root)  # derives into the index too: ``full()`` reads every row once
        try:
            twocores.share(ids, ours.derive, lambda: _Helper(root), min_keys=0)
        finally:
            ours.close()
        return ids

    def _open_index(self) -> None:
        if self.index is not None or not self.use_index:
            return
        self.index = open_index(self.layout)
        self.rows = MissionRows(self.layout, self.index)
        self.ledger_rows = LedgerRows(self.layout, self.index)

    def _from_index(self, mission_id: str, present: set[str]) -> bool:
        """A mission seen first whose row the index holds for its files as they are: the row
        taken as stored, its log opened at its end unread (folded when it changes)."""
        view, key = self.rows.cached(mission_id, present)
        if view is None:
            return False
        path = self.layout.mission_events(mission_id)
        self.feeds[mission_id] = LogFeed(
            path,
            lambda: MissionFold(mission_id),
            tail_lines=self.tail_lines,
            big=self.big_log,
            deferred=True,
            size=_log_size(key),  # the signature's own stat of the log, not a second one
        )
        self.views[mission_id] = view
        self._keys[mission_id] = key
        return True

    def _newest_of(self, mission_ids: list[str], out: list[EventLine]) -> None:
        """The newest events of logs opened unread (their rows came from the index), for the
        event pane: the most recently written logs' last lines, until a pane is full."""
        found = 0
        # each log's mtime is the last field of its row's signature (mission_rows.inputs)
        for mtime, mission_id in sorted(
            ((_last_mtime(self._keys.get(m, "")), m) for m in mission_ids), reverse=True
        ):
            if found >= PANE_LINES or mtime == 0:
                break
            path = self.layout.mission_events(mission_id)
            events = LogTail(path, tail_start(path, PANE_LINES)).poll()
            found += len(events)
            out.extend(
                event_line(event, mission_id)
                for event in events[-PANE_LINES:]
                if not seen_before(event, self._seen)
            )

    def _view(self, mission_id: str) -> None:
        feed = self.feeds.get(mission_id)
        if feed is None and mission_id in self._later:
            return  # its row comes from more(), its log folded first
        key = self.rows.signature(mission_id)
        if feed is not None and feed.deferred:
            if key == self._keys.get(mission_id):
                return  # its files are as they were: its stored row stands
            feed.undefer()  # a file changed: fold its log again, then derive the row
        if feed is not None and feed.history is not None and feed.start <= self.big_log:
            while feed.step_history(seconds=1.0):  # an undeferred small log: folded now
                pass
        view = mission_view(self.layout, self.cache, mission_id, feed, self.probe)
        self.views[mission_id] = view
        self._keys[mission_id] = key
        self.rows.remember(mission_id, key, view, feed)

    def _read_sandboxes(self) -> tuple[tuple[SandboxView, ...], str | None]:
        from uh_core.runtime.active import harness_sandboxes

        in_use = set().union(*self.active.values()) if self.active else set()
        in_use |= set(harness_sandboxes(self.layout))  # a live harness run's, too
        return sandbox_views(self.layout, self.cache, in_use)

    def _publish(self, events: list[EventLine], resets: list[str]) -> Update | None:
        if self.index is not None:
            self.index.flush()
        sandboxes, sandbox_problem = self._sandboxes
        folds = [(mission_id, feed.fold) for mission_id, feed in self.feeds.items()]
        audit = self.audit.fold if self.audit else None
        snapshot = Snapshot(
            self.layout.root,
            has_harness=True,
            missions=tuple(self.views[m] for m in sorted(self.views)),
            sandboxes=sandboxes,
            sandbox_problem=sandbox_problem,
            harness=harness_view(self._ledgers, folds, audit, self.probe, self._owners),
            runtimes=self._runtimes,
            malformed_lines=sum(f.malformed for f in self.feeds.values())
            + (self.audit.malformed if self.audit else 0),
            loaded=True,
        )
        if snapshot == self.snapshot and not events and not resets:
            return None
        self.snapshot = snapshot
        events.sort(key=lambda line: line.timestamp)
        dropped = max(len(events) - PANE_LINES, 0)
        return Update(snapshot, tuple(events[dropped:]), dropped, tuple(resets))


class _Helper:
    """One side of ``_first_read_on_two_cores``: a reader of its own (its own index
    connection) that derives rows and stores them; nothing it holds is returned."""

    def __init__(self, root: Path) -> None:
        self.store = Store(root)
        self.store.pane = False
        self.store._open_index()

    def first(self) -> None:
        read_ledgers(self.store.layout, self.store.ledger_rows)  # stored, with their aggregate

    def derive(self, mission_id: str) -> None:
        self.store._poll_feed(mission_id, [], [])
        self.store._view(mission_id)

    def close(self) -> None:
        if self.store.index is not None:
            self.store.index.close()


def _log_size(key: str) -> int:
    """The size in a signature's last field (the log's; 0 when absent)."""
    last = key.rsplit(" ", 1)[-1]
    return int(last.split(":")[1]) if last.count(":") == 2 else 0


def _last_mtime(key: str) -> int:
    """The mtime in a signature's last field (``ino:size:mtime``; 0 when absent)."""
    last = key.rsplit(" ", 1)[-1]
    if last.count(":") != 2:
        return 0
    return int(last.rsplit(":", 1)[1])


def ignored(parts: tuple[str, ...]) -> bool:
    """Paths under ``.harness/`` that never change what the snapshot says."""
    name = parts[-1]
    if name.startswith(".") and name.endswith(".tmp"):
        return True  # a whole-file write in progress; its rename is what counts
    if name.endswith(".lock"):
        return True
    # evidence of runs (full logs) and worktrees are never state the snapshot folds
    return len(parts) > 3 and parts[0] == "missions" and parts[2] == "runs"
