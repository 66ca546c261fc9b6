"""A table holds a window of its rows: the cursor walks past either edge and the window
moves with it; selecting a row outside it brings it in; the border says which rows show."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult

from uh_tui.widgets.keyed_table import KeyedTable, Row


class Small(KeyedTable):
    COLUMNS = (("id", "id"), ("title", "title"))
    PAGE = 10


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Small(id="t")


def rows(n: int) -> list[Row]:
    return [(f"m{i:03d}", (Text(f"m{i:03d}"), f"title {i}")) for i in range(n)]


def run(scenario: Callable[[Any, Small], Any]) -> None:
    async def main() -> None:
        app = Host()
        async with app.run_test(size=(60, 20)) as pilot:
            table = app.query_one(Small)
            table.focus()
            await scenario(pilot, table)

    asyncio.run(main())


def test_the_window_moves_with_the_cursor() -> None:
    async def scenario(pilot: Any, table: Small) -> None:
        table.set_rows(rows(35))
        await pilot.pause()
        assert table.row_count == 10 and table.total_rows == 35
        assert table.border_subtitle == "rows 1–10 of 35"
        for _ in range(9):
            await pilot.press("down")
        assert table.selected_key == "m009"
        await pilot.press("down")  # past the window's last row
        assert table.selected_key == "m010"
        assert table.border_subtitle == "rows 6–15 of 35"
        await pilot.press("ctrl+end")
        assert table.selected_key == "m034" and table.border_subtitle == "rows 26–35 of 35"
        await pilot.press("down")  # the last row of all: nowhere to go
        assert table.selected_key == "m034"
        await pilot.press("ctrl+home")
        assert table.selected_key == "m000" and table.border_subtitle == "rows 1–10 of 35"
        table.select_key("m020")  # outside the window: brought in
        assert table.selected_key == "m020" and table.border_subtitle == "rows 16–25 of 35"
        await pilot.press("up", "up", "up", "up", "up", "up")
        assert table.selected_key == "m014"

    run(scenario)


def test_new_rows_keep_the_selected_one_and_few_rows_say_nothing() -> None:
    async def scenario(pilot: Any, table: Small) -> None:
        table.set_rows(rows(35))
        table.select_key("m030")
        table.set_rows(rows(36))  # a new row arrives: the selection stays
        assert table.selected_key == "m030"
        table.set_rows(rows(4))  # a filter leaves few rows: no window, no label
        assert table.row_count == 4 and table.border_subtitle == ""

    run(scenario)
