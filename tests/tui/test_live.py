"""Live updates in the app: appends and new missions on screen, folders appearing, a watcher
that fails, worktrees not watched. (The store itself: tests/workspace/test_store.py.)"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from tests.tui import fixtures
from tests.tui.conftest import SIZE, settle, until
from uh_core.events.writer import EventLog, append_line
from uh_core.init import init_project
from uh_core.layout import Layout
from uh_core.models.events import (
    AcceptanceChecked,
    RuntimeProgress,
    VerificationFinished,
)
from uh_tui.app import UhApp
from uh_tui.screens.dashboard import DashboardScreen
from uh_tui.screens.no_harness import NoHarnessScreen
from uh_tui.watch import WatchError
from uh_tui.widgets.status_line import StatusLine


def test_the_app_follows_appends_and_new_missions(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        layout = Layout(app.root)
        log = EventLog(
            layout.mission_events("changelog"),
            mission_id="changelog",
            run_id="verify-20260115T115930Z-00000a",
        )
        log.emit(
            AcceptanceChecked(
                ac_id="maintainer-review",
                status="failed",
                severity="warn",
                exit_code=1,
                timestamp="2026-01-15T12:00:05.000Z",
            )
        )
        log.emit(VerificationFinished(status="passed", timestamp="2026-01-15T12:00:06.000Z"))
        table = app.screen.query_one("#missions")
        await until(pilot, lambda: "PASSED" in str(table.get_row("changelog")[2]), what="verdict")
        (layout.mission_dir("fresh")).mkdir()
        layout.mission_file("fresh").write_text(
            "id: fresh\ntitle: A mission added while watching\n"
        )
        await until(pilot, lambda: table.row_count == 6, what="new mission row")

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await scenario(pilot)

    asyncio.run(main())


def test_ledgers_folder_created_later_is_watched(workspace: Path) -> None:
    shutil.rmtree(workspace / ".harness/runs")
    app = UhApp(workspace, poll_s=60)  # no safety poll within the test: only the watcher

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.snapshot.harness.ledgers == ()
            fixtures._ledgers(Layout(workspace))
            await until(pilot, lambda: len(app.snapshot.harness.ledgers) == 3, what="ledgers")

    asyncio.run(main())


def test_no_harness_then_init_opens_the_dashboard(tmp_path: Path, frozen: str) -> None:
    app = UhApp(tmp_path, poll_s=0.2)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert isinstance(app.screen, NoHarnessScreen)
            init_project(Layout(tmp_path))
            await until(
                pilot,
                lambda: isinstance(app.screen, DashboardScreen) and app.screen.ready,
                what="dashboard",
            )

    asyncio.run(main())


def test_a_watcher_error_is_a_footer_warning_and_polling_goes_on(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app._reader.inbox.put(WatchError("file watcher stopped: boom"))
            line = app.screen.query_one(StatusLine)
            await until(pilot, lambda: line.warning and "boom" in line.warning, what="warning")
            assert line.has_class("-warning") and "polling every" in line.warning
            log = EventLog(
                Layout(app.root).mission_events("divide"),
                mission_id="divide",
                run_id="sbx-divide-epsilon-20260115115900",
            )
            log.emit(
                RuntimeProgress(
                    runtime="epsilon",
                    message="still seen by the poll",
                    timestamp="2026-01-15T12:00:09.000Z",
                )
            )
            pane = app.screen.query_one("#events")
            await until(
                pilot, lambda: any("still seen" in ln.text for ln in pane.lines_seen), what="poll"
            )

    asyncio.run(main())


def test_worktrees_are_not_watched(workspace: Path) -> None:
    """An agent writing in its sandbox's worktree reaches no watcher; a log append does."""
    import queue
    import time

    from uh_tui.watch import Watchers

    inbox: queue.SimpleQueue[object] = queue.SimpleQueue()
    watchers = Watchers(workspace / ".harness", inbox)
    watchers.start()
    log = workspace / ".harness/missions/divide/events.ndjson"
    line = b'{"event":"runtime.progress","timestamp":"2026-01-15T12:00:00.000Z","runtime":"epsilon","message":"x"}\n'
    try:
        # the watchers are up once an append reaches them (a loaded machine starts their
        # thread late): a time.sleep here was a guess
        deadline = time.monotonic() + 30
        while inbox.empty():
            assert time.monotonic() < deadline, "no watcher reported an append to a log"
            append_line(log, line)
            time.sleep(0.05)
        worktree = workspace / ".harness/sandboxes/sbx-divide-alpha-20260115115000/worktree"
        (worktree / "src").mkdir(parents=True, exist_ok=True)
        for n in range(20):
            (worktree / "src" / f"file{n}.py").write_text("x = 1\n")
        time.sleep(0.3)  # what the worktree's writes would have reached by now, and then
        last = workspace / ".harness/missions/add-subtract/events.ndjson"
        append_line(last, line)  # an append to another log, reported after them
        reported: set[object] = set()
        while last not in reported:
            batch = inbox.get(timeout=30)
            assert isinstance(batch, set), batch
            reported |= batch
        assert reported <= {log, last}, reported  # the probes' logs; no worktree file
    finally:
        watchers.stop()
