"""The selected criterion: what it checks, and its stdout/stderr snippets."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from uh_core.workspace.state import CriterionView
from uh_tui import look

SNIPPET_LINES = 12


def _snippet(label: str, text: str, style: str) -> Text:
    lines = text.rstrip("\n").splitlines()
    if len(lines) > SNIPPET_LINES:
        lines = ["…", *lines[-SNIPPET_LINES:]]
    out = Text(f"{label}\n", style="bold")
    out.append("\n".join(lines) if lines else "(empty)", style=style if lines else "dim")
    return out


def describe(criterion: CriterionView | None, running: bool = False) -> Group | Text:
    if criterion is None:
        return Text("No criterion selected.", style="dim")
    head = Text(criterion.ac_id, style="bold")
    head.append("  ")
    head.append_text(look.status(criterion.status))
    parts: list[Text] = [head]
    if criterion.description:
        parts.append(Text(criterion.description))
    if criterion.command:
        parts.append(Text("$ " + look.short(criterion.command, 200), style="dim"))
    if criterion.status in ("pending", "running", "-"):
        parts.append(Text("output when it has run", style="dim italic"))
    elif running and not (criterion.stdout or criterion.stderr):
        parts.append(Text("output when the verification finishes", style="dim italic"))
    else:
        parts.append(_snippet("stdout", criterion.stdout, ""))
        parts.append(_snippet("stderr", criterion.stderr, "red"))
    return Group(*parts)


class CriterionDetail(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static(id="criterion-text")

    def show(self, criterion: CriterionView | None, running: bool = False) -> None:
        self.query_one("#criterion-text", Static).update(describe(criterion, running))
