"""The selected criterion: what it checks (its command as it runs, every line of a
multi-line one), and its stdout/stderr snippets.

Every value from a file is clipped (``uh_core.shown``) before Rich sees it — the description
to ``shown.LINE`` characters, a snippet to its last ``SNIPPET_LINES`` lines of at most
``shown.LINE`` characters each, taken from the end of the text without splitting the rest —
so the pane costs the same for a one-line description and for a megabyte."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from uh_core.shown import LINE, clip
from uh_core.workspace.state import CriterionView
from uh_tui import look

SNIPPET_LINES = 12
ID_CHARS = 80
COMMAND_CHARS = 200
COMMAND_LINES = 40  # a multi-line command's lines shown


def tail_lines(text: str, count: int = SNIPPET_LINES, width: int = LINE) -> list[str]:
    """The last ``count`` lines of ``text``, each clipped to ``width``; ``…`` first when
    there was more. Only the end of the text is looked at (``count`` lines of ``width``)."""
    text = text.rstrip("\n")
    window = (count + 1) * (width + 1)
    cut = len(text) > window
    lines = (text[-window:] if cut else text).splitlines()
    if cut and len(lines) > 1:
        lines = lines[1:]  # the first is the end of a line cut short: it belongs to "…"
    elif cut and lines:
        lines = ["…" + lines[0][-width:]]  # one line longer than the window: its end
    if cut or len(lines) > count:
        return ["…", *(clip(line, width) for line in lines[-count:])]
    return [clip(line, width) for line in lines]


def _snippet(label: str, text: str, style: str) -> Text:
    lines = tail_lines(text)
    out = Text(f"{label}\n", style="bold")
    out.append("\n".join(lines) if lines else "(empty)", style=style if lines else "dim")
    return out


def command_text(command: str) -> Text:
    """The check command as it runs: one line as ``$ command``; several lines under a
    ``command`` label, each as written (indentation, quotes, a heredoc), so what is copied
    from the pane runs. Clipped like a snippet: the first ``COMMAND_LINES`` lines of at most
    ``shown.LINE`` characters, ``…`` when there is more."""
    text = command.strip("\n")
    if "\n" not in text:
        return Text("$ " + look.short(clip(text, 2 * COMMAND_CHARS), COMMAND_CHARS), style="dim")
    window = COMMAND_LINES * (LINE + 1)  # only the start of the text is looked at
    lines = text[:window].splitlines()
    if len(text) > window and len(lines) > 1:
        lines = lines[:-1]  # cut short by the window: it belongs to "…"
    more = len(text) > window or len(lines) > COMMAND_LINES
    shown = [clip(line.rstrip(), LINE) for line in lines[:COMMAND_LINES]]
    out = Text("command\n", style="bold")
    out.append("\n".join(shown + (["…"] if more else [])))
    return out


def describe(criterion: CriterionView | None, running: bool = False) -> Group | Text:
    if criterion is None:
        return Text("No criterion selected.", style="dim")
    head = Text(clip(criterion.ac_id, ID_CHARS), style="bold")
    head.append("  ")
    head.append_text(look.status(clip(criterion.status, ID_CHARS)))
    parts: list[Text] = [head]
    if criterion.description:
        parts.append(Text(clip(criterion.description, LINE)))
    if criterion.command:
        parts.append(command_text(criterion.command))
    if criterion.degraded:  # never a plain pass: the forfeited part, named, with its owner
        parts.append(Text("degraded: " + clip(criterion.degraded, LINE), style="yellow"))
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
