"""Words on the screen: the harness header never contradicts itself, counts agree with their
nouns, and the criteria table's markers sit under their own heading."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.app import App, ComposeResult

from tests.tui.conftest import SIZE, settle
from uh_core.workspace.state import CriterionView, HarnessView, LedgerView
from uh_tui import look
from uh_tui.app import UhApp
from uh_tui.widgets.criteria_table import CriteriaTable
from uh_tui.widgets.pass_rate import label


def test_the_harness_header_of_a_first_run_in_progress() -> None:
    first = label(HarnessView(running="harness-20260115T115800Z-0000hh"))
    assert "no harness runs yet" not in first and "press h" not in first
    assert first.startswith("● harness run in progress: the first")
    assert label(HarnessView()) == "no harness runs yet: press h"
    one = HarnessView(ledgers=(LedgerView("harness-1", status="completed", passed=1),))
    assert label(one) == "pass rate 100% last · 100% over 1 run"


def test_counts_agree_with_their_nouns(make_app: Callable[..., UhApp]) -> None:
    assert [look.plural(n, "mission") for n in (0, 1, 2)] == [
        "0 missions",
        "1 mission",
        "2 missions",
    ]
    assert look.plural(1, "sandbox") == "1 sandbox" and look.plural(2, "sandbox") == "2 sandboxes"
    app = make_app()

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("4", "slash", *"epsilon")
            await pilot.pause()
            banner = str(app.screen.query_one("#sandboxes-banner").render())
            assert banner.startswith("1 sandbox · 0 in use"), banner

    asyncio.run(main())


class _Criteria(App[None]):
    def compose(self) -> ComposeResult:
        yield CriteriaTable(id="criteria")

    def on_mount(self) -> None:
        self.query_one(CriteriaTable).show(
            (
                CriterionView("divide-works", status="failed", exit_code=1, duration_ms=80),
                CriterionView(
                    "ac-tdd-tests-precede-code", status="blocked", duration_ms=0, synthetic=True
                ),
            )
        )


def test_the_synthetic_marker_sits_under_its_own_heading() -> None:
    """It spilled into the exit column: the column had no heading, and the table was wider
    than its pane. Now it is ``flags``, and the table fits its pane."""
    app = _Criteria()

    async def main() -> None:
        async with app.run_test(size=(80, 8)) as pilot:
            await pilot.pause()
            table = app.query_one(CriteriaTable)
            header = [str(column.label) for column in table.ordered_columns]
            assert header[-2:] == ["exit", "flags"]
            flags = str(table.get_row("ac-tdd-tests-precede-code")[-1])
            assert (
                flags == "synthetic" and str(table.get_row("ac-tdd-tests-precede-code")[-2]) == ""
            )
            assert table.virtual_size.width <= table.scrollable_content_region.width

    asyncio.run(main())
