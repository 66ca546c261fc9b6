"""The line above the footer: what was launched and how it went, and watcher trouble."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


class StatusLine(Static):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.message: Text = Text("")
        self.warning: str | None = None

    def on_mount(self) -> None:
        self.message = getattr(self.app, "status_text", self.message)
        self.warn(getattr(self.app, "warning", None))

    def say(self, message: Text | str, style: str = "") -> None:
        self.message = message if isinstance(message, Text) else Text(message, style=style)
        self._render_line()

    def warn(self, warning: str | None) -> None:
        self.warning = warning
        self.set_class(warning is not None, "-warning")
        self._render_line()

    def _render_line(self) -> None:
        if self.warning:
            line = Text(f"⚠ {self.warning}", style="bold")
            if self.message.plain:
                line.append("   ")
                line.append_text(self.message)
            self.update(line)
        else:
            self.update(self.message)
