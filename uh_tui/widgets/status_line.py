"""The line above the footer: the start of the newest message (what was launched and how it
went), and watcher trouble. One line, never wrapped: a message that does not fit, or has
more lines, ends with ``… m: messages`` — the message log has all of it."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget


class StatusLine(Widget):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.message: Text = Text("")
        self.warning: str | None = None

    def on_mount(self) -> None:
        self.message = getattr(self.app, "status_text", self.message)
        self.warn(getattr(self.app, "warning", None))

    def say(self, message: Text | str, style: str = "") -> None:
        self.message = message if isinstance(message, Text) else Text(message, style=style)
        self.refresh()

    def warn(self, warning: str | None) -> None:
        self.warning = warning
        self.set_class(warning is not None, "-warning")
        self.refresh()

    def full(self) -> Text:
        """The whole message (warning first), however long."""
        if not self.warning:
            return self.message
        line = Text(f"⚠ {self.warning}", style="bold")
        if self.message.plain:
            line.append("   ")
            line.append_text(self.message)
        return line

    def render(self) -> Text:
        return one_line(self.full(), self.content_size.width, self._hint())

    def _hint(self) -> str:
        key = getattr(self.app, "key_display", None)
        return f" … {key('app.messages', 'm') if key else 'm'}: messages"


def one_line(text: Text, width: int, hint: str) -> Text:
    """The first line of ``text`` in ``width`` cells; ``hint`` at the end when cut."""
    lines = text.split("\n", allow_blank=True)
    first = lines[0] if lines else Text("")
    more = len([line for line in lines[1:] if line.plain.strip()]) > 0
    if width <= 0 or (not more and cell_len(first.plain) <= width):
        return first
    room = max(width - cell_len(hint), 0)
    shown = first.copy()
    shown.truncate(room)
    shown.rstrip()
    shown.append(hint, style="dim italic")
    shown.truncate(width)
    return shown
