"""The live event pane: one line per event (uh_core's ``describe``), newest at the bottom.

Lines are kept as plain strings and only the visible ones are rendered (coloured by
``EventHighlighter``, once each), so the cost of a frame does not grow with the event rate.
It keeps the last ``KEEP`` events so a filter applies to what is shown.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable

from rich.cells import cell_len
from rich.highlighter import Highlighter
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from uh_core.workspace.state import EventLine
from uh_tui import look

KEEP = 1000
SOURCE = 14
EVENT = 28


class EventHighlighter(Highlighter):
    """Time dim, source bold, event type by kind, outcome words by outcome."""

    RULES: tuple[tuple[re.Pattern[str], str], ...] = (
        (re.compile(r"^\S+"), "dim"),
        (re.compile(r"^\S+\s+(\S+)"), "bold"),
        (re.compile(r"^\S+\s+\S+\s+(\S+\.started|runtime\.progress)\b"), "cyan"),
        (re.compile(r"\b(passed|succeeded|pass|agreement|completed|PASSED|passed=True)"), "green"),
        (re.compile(r"\b(failed|fail|error|divergent|FAILED|passed=False)\b"), "red"),
        (re.compile(r"\b(blocked|cancelled|skipped|unobserved|BLOCKED)\b"), "yellow"),
    )

    def highlight(self, text: Text) -> None:
        plain = text.plain
        for pattern, style in self.RULES:
            for found in pattern.finditer(plain):
                group = 1 if pattern.groups else 0
                text.stylize(style, found.start(group), found.end(group))


def render(line: EventLine) -> str:
    return (
        f"{look.clock(line.timestamp)}  {look.short(line.source, SOURCE):<{SOURCE}} "
        f"{line.event:<{EVENT}} {line.text}"
    )


class EventPane(ScrollView, can_focus=True):
    """The newest ``KEEP`` event lines; follows the end unless the user scrolled up.

    Each line is turned into a ``Strip`` once, when first shown, and kept with it: a frame
    crops the visible strips and renders nothing else, so its cost does not grow with the
    event rate or the history. (Textual's ``Log`` measures every write on a worker thread
    and re-lays-out on each size change: at 200 events a second that was most of a frame.)
    """

    # A growing pane changes only its own scrollable size: repaint it and its scrollbar,
    # never re-lay-out the whole screen (Widget.virtual_size is layout=True).
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def watch_virtual_size(self, size: Size) -> None:
        self._scroll_update(size)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # follow the end again once the user scrolls back down to it
        self._follow = round(new_value) >= self.max_scroll_y

    def on_resize(self) -> None:
        if self._follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def __init__(self, *, id: str | None = None, mission: str | None = None) -> None:
        super().__init__(id=id)
        self.highlighter = EventHighlighter()
        self.mission = mission  # only this mission's events (the mission screen)
        self.filter = ""
        self.lines_seen: deque[EventLine] = deque(maxlen=KEEP)
        self._shown: deque[_Shown] = deque(maxlen=KEEP)
        self._widest = 0
        self._frame: tuple[Style, int] | None = None
        self._follow = True  # keep the newest line in view (until the user scrolls up)
        self.border_title = "events"

    @property
    def lines(self) -> list[str]:
        """The text of the lines shown (after the filter), oldest first."""
        return [shown.text for shown in self._shown]

    def _wanted(self, line: EventLine) -> bool:
        if self.mission is not None and line.source != self.mission:
            return False
        if self.filter:
            needle = self.filter.lower()
            return (
                needle in line.source.lower() or needle in line.event or needle in line.text.lower()
            )
        return True

    def add(self, lines: Iterable[EventLine]) -> None:
        shown = []
        for line in lines:
            if self.mission is not None and line.source != self.mission:
                continue
            self.lines_seen.append(line)
            if self._wanted(line):
                shown.append(render(line))
        if shown:
            self._write(shown)

    def note(self, message: str) -> None:
        self._write([f"-- {message}"])

    def set_filter(self, text: str) -> None:
        if text == self.filter:
            return
        self.filter = text
        self._shown.clear()
        self._widest = 0
        self._follow = True  # a new filter shows its newest matches
        self._write([render(line) for line in self.lines_seen if self._wanted(line)])

    def _write(self, texts: list[str]) -> None:
        for text in texts:
            self._shown.append(_Shown(text))
            self._widest = max(self._widest, cell_len(text))
        self.virtual_size = Size(self._widest, len(self._shown))
        if self._follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        # the style and width are the same for every line of a frame: look them up once
        self._frame = (self.rich_style, self.scrollable_content_region.width)
        return super().render_lines(crop)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        if self._follow:
            # following: the last lines, even in a frame drawn before the scroll caught up
            # (the first frame, laid out after the lines arrived)
            scroll_y = self.max_scroll_y
        style, width = self._frame or (self.rich_style, self.scrollable_content_region.width)
        index = scroll_y + y
        if index >= len(self._shown):
            return Strip.blank(width, style)
        shown = self._shown[index]
        if shown.strip is None or shown.style != style:
            text = Text(shown.text, no_wrap=True)
            text.stylize(style)
            self.highlighter.highlight(text)
            shown.strip = Strip(text.render(self.app.console), cell_len(shown.text))
            shown.style = style
        return shown.strip.crop_extend(scroll_x, scroll_x + width, style)


class _Shown:
    """One line of the pane: its text, and its strip once rendered (with the style used)."""

    __slots__ = ("strip", "style", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.strip: Strip | None = None
        self.style: Style | None = None
