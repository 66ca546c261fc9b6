"""The live event pane: one line per event (uh_core's ``describe``), newest at the bottom.

Built on Textual's ``Log``: lines are kept as plain strings and only the visible ones are
rendered (and coloured by ``EventHighlighter``), so the cost of a frame does not grow with
the event rate — at 200 events a second a ``RichLog`` spends its time rendering lines that
scroll away unseen. It keeps the last ``KEEP`` events so a filter applies to what is shown.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable

from rich.highlighter import Highlighter
from rich.text import Text
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widgets import Log

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


class EventPane(Log):
    # A growing log changes only its own scrollable size: repaint it and its scrollbar,
    # never re-lay-out the whole screen (Widget.virtual_size is layout=True), which at
    # 200 events a second was most of a frame's cost.
    virtual_size: Reactive[Size] = Reactive(Size(0, 0), layout=False)

    def watch_virtual_size(self, size: Size) -> None:
        self._scroll_update(size)

    def __init__(self, *, id: str | None = None, mission: str | None = None) -> None:
        super().__init__(id=id, max_lines=KEEP, highlight=True)
        self.highlighter = EventHighlighter()
        self.mission = mission  # only this mission's events (the mission screen)
        self.filter = ""
        self.lines_seen: deque[EventLine] = deque(maxlen=KEEP)
        self.border_title = "events"

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
            full = len(self.lines) >= KEEP
            self.write_lines(shown)
            if full:
                # Log prunes old lines without repainting the rows that shifted up
                self.refresh()

    def note(self, message: str) -> None:
        self.write_line(f"-- {message}")

    def set_filter(self, text: str) -> None:
        if text == self.filter:
            return
        self.filter = text
        self.clear()
        self.write_lines([render(line) for line in self.lines_seen if self._wanted(line)])
