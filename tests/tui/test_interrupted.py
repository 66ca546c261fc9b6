"""A running state whose process is gone (``uh_core.workspace.liveness``) reads
``interrupted`` on the dashboard, with when it was last seen alive: a verify (the missions
table's live column, the criteria pane, the mission screen), a mission run (the runtimes
view) and a harness run (the harness header, its mission's row, the runs table — whether it
left a ledger saying ``running`` or died before its first)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.tui import fixtures
from tests.tui.conftest import settle
from uh_core.layout import Layout
from uh_tui.app import UhApp
from uh_tui.widgets.keyed_table import KeyedTable

HARNESS_RUN = "harness-20260115T115800Z-0000hh"  # changelog's, in progress in the fixture
# frozen "now" is 12:00:00; each state's last event: the harness run's 11:59:50.000,
# changelog's verify 11:59:32.100, divide's epsilon run 11:59:40.000
HARNESS_SEEN = "last seen 10s ago"
VERIFY_SEEN = "last seen 27s ago"
RUN_SEEN = "last seen 20s ago"


def cell(app: UhApp, table: str, row: str, column: int) -> str:
    return str(app.screen.query_one(table, KeyedTable).get_row(row)[column])


def test_the_fixture_runs_until_its_owners_are_gone(make_app: Callable[..., UhApp]) -> None:
    """Without owners (as the fixture is) the states run; the same logs with a dead owner
    are interrupted: the test below is about the owner, nothing else."""
    app = make_app()

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            assert "interrupted" not in app.export_text()
            assert cell(app, "#missions", "changelog", 4).startswith("● verify 2/3")

    asyncio.run(main())


def test_a_verify_a_run_and_a_harness_run_whose_process_died(
    workspace: Path, make_app: Callable[..., UhApp]
) -> None:
    owner = fixtures.interrupt(workspace)
    app = make_app()

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            # the missions table: the verdict and the live column
            assert cell(app, "#missions", "changelog", 2) == " INTERRUPTED "
            verdict = app.screen.query_one("#missions", KeyedTable).get_row("changelog")[2]
            assert "on yellow" in str(verdict.style)  # type: ignore[union-attr]
            assert cell(app, "#missions", "changelog", 4) == f"⚠ interrupted · {HARNESS_SEEN}"
            assert cell(app, "#missions", "divide", 4) == f"⚠ interrupted · {RUN_SEEN}"
            # the criteria pane of the verify: what it had not checked is unobserved
            await pilot.press("down", "down")  # broken, changelog
            await pilot.pause()
            criteria = app.screen.query_one("#criteria", KeyedTable)
            assert f"verify interrupted · {VERIFY_SEEN}" in str(criteria.border_subtitle)
            assert cell(app, "#criteria", "maintainer-review", 2) == "unobserved"
            screen = app.export_text()
            assert f"⚠ verify interrupted · {VERIFY_SEEN}" in screen
            assert "● verify" not in screen and "● harness" not in screen

            # the harness view: the header, the mission's row, the runs table
            await pilot.press("3")
            await pilot.pause()
            header = str(app.screen.query_one("#pass-rate-label", Static).render())
            assert header.startswith(f"⚠ harness run interrupted · {HARNESS_SEEN} · pass rate")
            assert cell(app, "#harness", "changelog", 1) == " INTERRUPTED "
            assert cell(app, "#harness", "changelog", 7).startswith(f"{HARNESS_SEEN} · attempt 2")
            runs = app.screen.query_one("#harness-runs", KeyedTable)
            assert runs.selected_key == HARNESS_RUN  # the newest first
            assert cell(app, "#harness-runs", HARNESS_RUN, 1) == f"⚠ interrupted · {HARNESS_SEEN}"
            assert "harness run in progress" not in app.export_text()

            # the runtimes view of divide: its epsilon run
            await pilot.press("1", "down")  # divide
            await pilot.press("2")
            await pilot.pause()
            banner = str(app.screen.query_one("#runtimes-banner", Static).render())
            assert f"⚠ run epsilon interrupted · {RUN_SEEN}" in banner
            assert cell(app, "#comparison", "epsilon", 1) == "interrupted"

            # the mission screen: the verdict, and each interrupted state in full
            await pilot.press("1", "up", "enter")  # changelog
            await pilot.pause()
            screen = app.export_text()
            assert f"INTERRUPTED  {VERIFY_SEEN}" in screen
            assert f"⚠ harness run interrupted · {HARNESS_SEEN}" in screen
            assert (
                f"⚠ verify interrupted: its process (pid {owner.pid}) is gone; "
                "last seen 2026-01-15T11:59:32.100Z" in screen
            )

    asyncio.run(main())


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
def test_a_harness_run_that_left_a_ledger_saying_running(
    workspace: Path, make_app: Callable[..., UhApp], size: tuple[int, int]
) -> None:
    """Its ledger (written after each mission) says ``running``; its runner is gone: the row
    of that ledger reads interrupted, last seen at its latest event (the ledger's or the
    logs'), and is not listed twice. At 80×24 the header says it in full."""
    fixtures.interrupt(workspace)
    ledgers = Layout(workspace).ledgers_dir
    ledger = json.loads((ledgers / "harness-20260115T110000Z-000003.json").read_text())
    ledger.update(run_id=HARNESS_RUN, status="running", started_at=fixtures.ts("11:58:00.000"))
    ledger["finished_at"] = None
    (ledgers / f"{HARNESS_RUN}.json").write_text(json.dumps(ledger))
    app = make_app(view="harness")

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            runs = app.screen.query_one("#harness-runs", KeyedTable)
            assert runs.row_count == 4 and runs.selected_key == HARNESS_RUN
            status = cell(app, "#harness-runs", HARNESS_RUN, 1)
            screen = app.export_text()
            assert f"⚠ harness run interrupted · {HARNESS_SEEN}" in screen
            if size == (160, 48):
                assert status == f"⚠ interrupted · {HARNESS_SEEN}"
            else:  # its word stays, what gives way is when it was last seen
                assert status == "⚠ interrupted…"

    asyncio.run(main())
