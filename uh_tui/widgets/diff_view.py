"""A runtime's patch, coloured: headers bold, hunks cyan, additions green, removals red."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import RichLog

MAX_LINES = 5000


HEADERS = ("diff --git", "index ", "new file", "deleted file", "similarity", "rename ")


def colour(line: str) -> Text:
    if line.startswith(
        ("diff --git", "index ", "new file", "deleted file", "similarity", "rename ")
    ):
        return Text(line, style="bold")
    if line.startswith(("+++", "---")):
        return Text(line, style="bold")
    if line.startswith("@@"):
        return Text(line, style="cyan")
    if line.startswith("+"):
        return Text(line, style="green")
    if line.startswith("-"):
        return Text(line, style="red")
    return Text(line)


class DiffView(RichLog):
    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, wrap=False, highlight=False, markup=False, auto_scroll=False)

    def show_patch(self, text: str) -> None:
        self.clear()
        lines = text.splitlines()
        for line in lines[:MAX_LINES]:
            self.write(colour(line))
        if len(lines) > MAX_LINES:
            self.write(Text(f"… {len(lines) - MAX_LINES} more lines", style="dim"))
        self.scroll_home(animate=False)

    def show_message(self, message: str) -> None:
        self.clear()
        self.write(Text(message, style="dim"))
