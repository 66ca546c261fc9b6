"""Words on the screen: the harness header never contradicts itself, counts agree with their
nouns (``1 sandbox``, ``0 of 1 mission``, ``1 byte cut``), and the criteria table's markers
sit under their own heading."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from textual.app import App, ComposeResult

from tests.tui.conftest import SIZE, settle
from uh_core.layout import Layout
from uh_core.workspace.ledger_view import budget_text
from uh_core.workspace.state import CriterionView, HarnessView, LedgerView
from uh_tui import launch, look
from uh_tui.app import UhApp
from uh_tui.widgets.criteria_table import CriteriaTable
from uh_tui.widgets.keyed_table import KeyedTable
from uh_tui.widgets.pass_rate import label


def test_the_harness_header_of_a_first_run_in_progress() -> None:
    first = label(HarnessView(running="harness-20260115T115800Z-0000hh"))
    assert "no harness runs yet" not in first and "press h" not in first
    assert first.startswith("● harness run in progress: the first")
    assert label(HarnessView()) == "no harness runs yet: press h"
    one = HarnessView(ledgers=(LedgerView("harness-1", status="completed", passed=1),))
    assert label(one) == "pass rate: last run 100% 1/1 · all 1 run 100% 1/1"


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
            assert banner.startswith("1 sandbox · filter “epsilon” · 0 in use"), banner

    asyncio.run(main())


def test_a_budget_of_missions_agrees_with_its_limit() -> None:
    def used(started: int, limit: int) -> str:
        return budget_text({"max_requirements": limit, "started": started})

    assert [used(0, 1), used(1, 1), used(1, 2), used(0, 3)] == [
        "0 of 1 mission",
        "1 of 1 mission",
        "1 of 2 missions",
        "0 of 3 missions",
    ]
    budget = {"budget_seconds": 600, "elapsed_s": 12, "max_requirements": 1, "started": 0}
    assert budget_text(budget) == "12s of 600s · 0 of 1 mission"


def test_the_harness_view_counts_missions_as_it_should(
    workspace: Path, make_app: Callable[..., UhApp]
) -> None:
    """A run limited to one mission (``--max-requirements 1``): its budget column and, while
    it runs, the harness header say ``1 mission`` — they said ``1 missions``."""
    path = Layout(workspace).ledgers_dir / "harness-20260115T110000Z-000003.json"
    ledger = json.loads(path.read_text())
    ledger["budget"].update(max_requirements=1, started=1)
    path.write_text(json.dumps(ledger))
    audit = Layout(workspace).audit_log
    lines = audit.read_text().splitlines()
    for index, line in enumerate(lines):
        data = json.loads(line)
        if data.get("event") == "harness.run.started":
            data["budget"].update(max_requirements=1)
            lines[index] = json.dumps(data)
    audit.write_text("\n".join(lines) + "\n")
    app = make_app(view="harness")

    async def main() -> None:
        async with app.run_test(size=(200, 40)) as pilot:
            await settle(pilot)
            runs = app.screen.query_one("#harness-runs", KeyedTable)
            budget = str(runs.get_cell("harness-20260115T110000Z-000003", "budget"))
            assert budget == "96s of 600s · 1 of 1 mission", budget
            header = str(app.screen.query_one("#pass-rate-label").render())
            assert header.startswith("● harness run in progress (0s of 900s · 0 of 1 mission)")
            assert "missions" not in header

    asyncio.run(main())


def test_a_long_output_says_how_many_bytes_it_cut(tmp_path: Path) -> None:
    for extra, said in ((1, "… 1 byte cut …"), (2, "… 2 bytes cut …")):
        path = tmp_path / f"out-{extra}"
        path.write_bytes(b"x" * (launch.MAX_OUTPUT + extra))
        with path.open("rb") as handle:
            assert said in launch._read(handle)


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
