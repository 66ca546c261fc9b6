"""The event pane: follows the newest line, stays put while the user reads older ones,
keeps at most KEEP lines, and a filter shows its newest matches."""

from __future__ import annotations

import asyncio

from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.strip import Strip

from uh_core.workspace.state import EventLine
from uh_tui.widgets.event_pane import KEEP, EventHighlighter, EventPane, render


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


class BorderedPaneApp(PaneApp):
    CSS = """
    EventPane { height: 9; border: round $panel-lighten-2; border-title-color: $text-muted; }
    EventPane:focus { border: round $accent; border-title-color: $accent; }
    """

    def on_mount(self) -> None:
        self.query_one(EventPane).border_title = "events"


def _rows(pane: EventPane) -> list[Strip]:
    return list(pane.render_lines(pane.outer_size.region))  # the border's rows too


def _fresh_rows(pane: EventPane) -> list[Strip]:
    """The rows as Textual styles them with nothing kept from an earlier frame."""
    pane._generation += 1
    pane._styles_cache.clear()
    return _rows(pane)


def test_kept_rows_are_what_textual_draws() -> None:
    """Each line's finished row is kept while it scrolls up: after new lines, a focus (the
    border's colour), a scroll and a filter, the rows are those of a render from nothing."""

    async def main() -> None:
        app = BorderedPaneApp()
        async with app.run_test(size=(80, 12)) as pilot:
            pane = app.query_one(EventPane)
            pane.add(_lines(0, 3))
            await pilot.pause()
            assert _rows(pane) == _fresh_rows(pane)
            for n in range(3, 40):
                pane.add(_lines(n, 1))
                await pilot.pause()
                assert f"n{n}" in "".join(strip.text for strip in _rows(pane))
            assert _rows(pane) == _fresh_rows(pane)
            pane.focus()
            await pilot.pause()
            focused = _rows(pane)
            assert focused == _fresh_rows(pane)
            pane.blur()
            await pilot.pause()
            assert _rows(pane) != focused  # the border's colour changed back
            pane.scroll_home(animate=False, immediate=True)
            await pilot.pause()
            assert "n0" in "".join(strip.text for strip in _rows(pane))
            assert _rows(pane) == _fresh_rows(pane)
            pane.set_filter("n3")
            await pilot.pause()
            assert _rows(pane) == _fresh_rows(pane)

    asyncio.run(main())


def test_following_in_place_keeps_the_scrollbar_true() -> None:
    """A line appended while following moves the scroll position and the scrollbar without
    Textual's round trip; the scrollbar then says what Textual would have said."""

    async def main() -> None:
        app = BorderedPaneApp()
        async with app.run_test(size=(80, 12)) as pilot:
            pane = app.query_one(EventPane)
            pane.add(_lines(0, 20))
            await pilot.pause()
            bar = pane.vertical_scrollbar
            for n in range(20, 120):
                pane.add(_lines(n, 1))
                await pilot.pause()
                assert pane.scroll_y == pane.max_scroll_y and pane.is_vertical_scroll_end
                assert bar.window_virtual_size == pane.virtual_size.height == n + 1
                assert bar.position == bar.validate_position(pane.scroll_y)
                drawn = list(bar.render_lines(bar.size.region))
                bar.refresh()
                assert list(bar.render_lines(bar.size.region)) == drawn

    asyncio.run(main())


def test_a_line_is_styled_as_rich_would_style_it() -> None:
    """The pane cuts a line into styled segments itself; rich's Text.render of the same
    text, stylized and highlighted, gives the same segments."""
    console = Console(width=200)
    highlighter = EventHighlighter()
    base = Style(color="white", bgcolor="black")
    lines = [
        *(render(line) for line in _lines(0, 2)),
        "12:00:00.000  mission-a      runtime.progress             passed=True failed blocked",
        "12:00:01.000  audit          verify.started               FAILED PASSED cancelled error",
        "12:00:02.000  m              harness.attempt.finished     outcome=pass agreement skipped",
        "-- re-read from the start (replaced or truncated): missions/m/events.ndjson",
        "x",
        "",
    ]
    for plain in lines:
        text = Text(plain, no_wrap=True)
        text.stylize(base)
        highlighter.highlight(text)
        assert highlighter.segments(plain, base, console) == list(text.render(console)), plain
