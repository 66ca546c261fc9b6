"""The live event pane: one line per event (uh_core's ``describe``), newest at the bottom.

Lines are kept as plain strings and only the visible ones are rendered (coloured by
``EventHighlighter``, once each), so the cost of a frame does not grow with the event rate.
It keeps the last ``KEEP`` events so a filter applies to what is shown.

At 200 events a second this pane is what every frame draws (benchmarks/tui_latency.py):
each line is styled into its final strip (border, background, filters) once and that
strip is reused while the line scrolls up, and a line appended while following the end
moves the scroll position and scrollbar in place, repainting the scrollbar only when its
thumb moves on screen.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from itertools import pairwise
from math import ceil
from operator import itemgetter

from rich.cells import cell_len
from rich.console import Console
from rich.highlighter import Highlighter
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.reactive import Reactive
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

from uh_core.workspace.state import EventLine
from uh_tui import look

KEEP = 1000
SOURCE = 14
EVENT = 28
FILTERED = " · filter “"  # the title's note while a filter is set


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

    def __init__(self) -> None:
        super().__init__()
        self._styles: dict[str, Style] = {}
        self._combined: dict[tuple[Style, ...], Style] = {}

    def highlight(self, text: Text) -> None:
        for start, end, style in self._spans(text.plain):
            text.stylize(style, start, end)

    def _spans(self, plain: str) -> Iterable[tuple[int, int, str]]:
        for pattern, style in self.RULES:
            group = 1 if pattern.groups else 0
            for found in pattern.finditer(plain):
                yield found.start(group), found.end(group), style

    def segments(self, plain: str, base: Style, console: Console) -> list[Segment]:
        """What ``Text.render`` makes of ``plain`` stylized with ``base`` and then
        highlighted (the same cuts, the same combined styles), without building the Text
        and its spans: a new line is drawn at every append."""
        if not plain:
            return [Segment(plain)]
        styles = [Style.null(), base]
        spans = [(0, len(plain), 1)]
        for start, end, name in self._spans(plain):
            if end > start:
                style = self._styles.get(name)
                if style is None:
                    style = self._styles[name] = console.get_style(name, default=Style.null())
                styles.append(style)
                spans.append((start, end, len(styles) - 1))
        marks = sorted(
            [
                (0, False, 0),
                *((start, False, index) for start, _, index in spans),
                *((end, True, index) for _, end, index in spans),
                (len(plain), True, 0),
            ],
            key=itemgetter(0, 1),
        )
        stack: list[int] = []
        out: list[Segment] = []
        for (offset, leaving, index), (following, _, _) in pairwise(marks):
            if leaving:
                stack.remove(index)
            else:
                stack.append(index)
            if following > offset:
                key = tuple(styles[i] for i in sorted(stack))
                combined = self._combined.get(key)
                if combined is None:
                    combined = self._combined[key] = Style.combine(key)
                out.append(Segment(plain[offset:following], combined))
        return out


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
        self._look: tuple[object, ...] = ()
        self._generation = 0  # bumped when the rows' look changes: kept strips are stale
        self._edges: dict[int, tuple[object, Strip]] = {}  # border rows, by row
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
        # the title says the pane is filtered, as every pane the filter narrows does
        base = str(self.border_title or "events").split(FILTERED)[0]
        self.border_title = base + (f"{FILTERED}{text}”" if text else "")
        self._shown.clear()
        self._widest = 0
        self._follow = True  # a new filter shows its newest matches
        self._write([render(line) for line in self.lines_seen if self._wanted(line)])

    def _write(self, texts: list[str]) -> None:
        for text in texts:
            self._shown.append(_Shown(text))
            self._widest = max(self._widest, cell_len(text))
        size = Size(self._widest, len(self._shown))
        if self._follow and self._follow_in_place(size):
            return
        self.virtual_size = size
        if self._follow:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.refresh(self._content())

    def _follow_in_place(self, size: Size) -> bool:
        """Following, with only the height grown and the scrollbar already shown: move the
        scroll position and the scrollbar to the end without the reactive round trip
        (Textual's path re-validates both scrollbars and repaints the vertical one on
        every line). False when anything else changes: the caller takes Textual's path."""
        old = self.virtual_size
        if (
            size.width != old.width
            or size.height < old.height
            or not self.show_vertical_scrollbar
            or self.show_horizontal_scrollbar
            or not self.container_size
        ):
            return False
        if size != old:
            bar = self.vertical_scrollbar
            before = _thumb(bar)
            self.set_reactive(EventPane.virtual_size, size)
            end = float(self.max_scroll_y)
            self.set_reactive(Widget.scroll_y, end)
            self.set_reactive(Widget.scroll_target_y, end)
            bar.set_reactive(ScrollBar.window_virtual_size, size.height)
            bar.set_reactive(ScrollBar.position, bar.validate_position(end))
            if _thumb(bar) != before:
                bar.refresh()
        self.refresh(self._content())
        return True

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._generation += 1  # a focus, a theme, reloaded CSS: every kept row is stale

    def render_lines(self, crop: Region) -> list[Strip]:
        # the style and width are the same for every line of a frame: look them up once
        self._frame = (self.rich_style, self.scrollable_content_region.width)
        # Every content row is the same border + background + filters around its line, so
        # a line's finished row is kept with it and reused while the line scrolls up
        # (Textual's styles cache keeps rows by position: a new line re-styles them all);
        # the border rows are kept too. What else shapes a row starts the keeping over.
        look = (
            self._frame,
            self.size,
            self.scroll_offset.x,
            crop.column_span,
            self.styles.border,
            self.background_colors,
            tuple(self.app.get_line_filters()),
        )
        if look != self._look:
            self._look = look
            self._generation += 1
        edge = (self._generation, self.border_title, self.border_subtitle)
        top = self.styles.gutter.top
        rows = self.scrollable_content_region.height
        first = self.max_scroll_y if self._follow else self.scroll_offset.y
        shown = self._shown
        generation = self._generation
        strips: list[Strip | None] = []
        missing: list[tuple[int, _Shown | None]] = []
        for y in crop.line_range:
            line: _Shown | None = None
            if top <= y < top + rows:
                index = first + y - top
                if 0 <= index < len(shown):
                    line = shown[index]
                    if line.final_generation == generation:
                        strips.append(line.final)
                        continue
            else:
                kept = self._edges.get(y)
                if kept is not None and kept[0] == edge:
                    strips.append(kept[1])
                    continue
            strips.append(None)
            missing.append((y, line))
        if missing:
            # the rows not kept, styled by Textual in one pass (its cost is mostly per call)
            low, high = missing[0][0], missing[-1][0]
            self._styles_cache.set_dirty(
                *(Region(crop.x, y, crop.width, 1) for y, line in missing if line is not None)
            )
            styled = super().render_lines(Region(crop.x, low, crop.width, high - low + 1))
            for y, line in missing:
                strip = styled[y - low]
                strips[y - crop.y] = strip
                if line is not None:
                    line.final, line.final_generation = strip, generation
                elif not top <= y < top + rows:
                    self._edges[y] = (edge, strip)
        return strips  # type: ignore[return-value]  # every row is filled by now

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
            segments = self.highlighter.segments(shown.text, style, self.app.console)
            shown.strip = Strip(segments, cell_len(shown.text))
            shown.style = style
        return shown.strip.crop_extend(scroll_x, scroll_x + width, style)

    def _content(self) -> Region:
        """The rows of lines, in the widget's content coordinates (what a new line
        repaints: never the border and its title)."""
        return Region(0, 0, self.scrollable_content_region.width, self.container_size.height)


def _thumb(bar: ScrollBar) -> tuple[int, int] | None:
    """Where the scrollbar's thumb is drawn, in its renderer's fractions of a cell: the
    arithmetic of ``ScrollBarRender.render_bar`` on the values ``ScrollBar`` hands it."""
    size = bar.size.height
    virtual = ceil(bar.window_virtual_size)
    window = ceil(bar.window_size if bar.window_size < bar.window_virtual_size else 0)
    if not (window and size and virtual and size != virtual) or virtual == window:
        return None
    thumb = max(1, window / (virtual / size))
    steps = len(bar.renderer.VERTICAL_BARS)
    start = int((size - thumb) * (bar.position / (virtual - window)) * steps)
    return start, start + ceil(thumb * steps)


class _Shown:
    """One line of the pane: its text, its strip once rendered (with the style used), and
    its finished row (border and all) for the generation of the pane's look it was made in."""

    __slots__ = ("final", "final_generation", "strip", "style", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self.strip: Strip | None = None
        self.style: Style | None = None
        self.final: Strip | None = None
        self.final_generation = -1
