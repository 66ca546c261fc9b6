"""The event pane: follows the newest line, stays put while the user reads older ones,
keeps at most KEEP lines, and a filter shows its newest matches."""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult

from uh_core.workspace.state import EventLine
from uh_tui.widgets.event_pane import KEEP, EventPane


def _lines(start: int, count: int, source: str = "m") -> list[EventLine]:
    return [
        EventLine("2026-01-15T12:00:00.000Z", source, "runtime.progress", f"message=n{n}")
        for n in range(start, start + count)
    ]


class PaneApp(App[None]):
    def compose(self) -> ComposeResult:
        yield EventPane(id="events")


def test_follows_the_end_until_the_user_scrolls_up() -> None:
    async def main() -> None:
        app = PaneApp()
        async with app.run_test(size=(80, 12)) as pilot:
            pane = app.query_one(EventPane)
            pane.add(_lines(0, 100))
            await pilot.pause()
            assert pane.is_vertical_scroll_end and "n99" in pane.lines[-1]
            pane.scroll_home(animate=False, immediate=True)
            await pilot.pause()
            pane.add(_lines(100, 5))
            await pilot.pause()
            assert pane.scroll_y == 0  # reading old lines: not pulled down
            pane.scroll_end(animate=False, immediate=True)
            await pilot.pause()
            pane.add(_lines(105, 5))
            await pilot.pause()
            assert pane.is_vertical_scroll_end
            shown = "".join(strip.text for strip in pane.render_lines(pane.size.region))
            assert "n109" in shown

    asyncio.run(main())


def test_keeps_the_newest_and_filters() -> None:
    async def main() -> None:
        app = PaneApp()
        async with app.run_test(size=(80, 12)) as pilot:
            pane = app.query_one(EventPane)
            pane.add(_lines(0, KEEP + 50))
            pane.add(_lines(0, 3, source="other"))
            await pilot.pause()
            assert len(pane.lines) == KEEP and "n2" in pane.lines[-1]
            pane.set_filter("other")
            await pilot.pause()
            assert len(pane.lines) == 3 and pane.is_vertical_scroll_end
            pane.set_filter("")
            await pilot.pause()
            assert len(pane.lines) == KEEP

    asyncio.run(main())
