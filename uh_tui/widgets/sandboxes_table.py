"""Sandboxes from the index: id, mission, runtime, kind, branch, base, created, state.

An id too wide for its column is cut where it differs from the others (``distinct_cut``):
``sbx-divide-alpha-…`` and ``sbx-divide-beta-…`` read ``…alpha-2026…`` and ``…beta-20260…``
at 80 columns, never both ``sbx-divid…``."""

from __future__ import annotations

from rich.text import Text

from uh_core.workspace.state import SandboxView
from uh_tui import look, ticking
from uh_tui.widgets.keyed_table import Cell, KeyedTable, Row


class SandboxesTable(KeyedTable):
    COLUMNS = (
        ("id", "sandbox"),
        ("mission", "mission"),
        ("runtime", "runtime"),
        ("kind", "kind"),
        ("branch", "branch"),
        ("base", "base"),
        ("created", "created"),
        ("state", "state"),
    )
    MAX_WIDTHS = {"id": 40}
    FLEX = "branch"
    SHRINK = ("created", "base", "kind", "id", "mission")

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._ids: list[str] = []
        self._given: tuple[list[SandboxView], dict[str, str]] = ([], {})

    def on_mount(self) -> None:  # KeyedTable's on_mount runs too (Textual calls each class's)
        ticking.every_few_seconds(self, self._tick)

    def show(self, sandboxes: list[SandboxView], errors: dict[str, str]) -> None:
        self._ids = [s.id for s in sandboxes]
        self._given = (sandboxes, errors)
        self.set_rows([_row(s, s.id in errors) for s in sandboxes])

    def _tick(self) -> None:
        """``created 1s ago`` moves on: the same rows again, only changed cells redrawn."""
        if self._rows:
            self.show(*self._given)

    def _cell(self, column: str, cell: Cell, width: int) -> Cell:
        if column != "id" or not isinstance(cell, Text):
            return super()._cell(column, cell, width)
        return Text(distinct_cut(cell.plain, self._ids, width), style=cell.style)


def distinct_cut(text: str, others: list[str], width: int) -> str:
    """``text`` in ``width`` cells, cut so that it still differs from each of ``others``:
    the part every id shares with its closest neighbour (``sbx-divide-``) gives way to
    ``…`` first, from the start of the word where it differs; then the end, keeping the
    character that tells them apart (a tail such as a timestamp, when that is it)."""
    if len(text) <= width:
        return text
    if width < 3:
        return text[:width]
    differs = max((_common(text, other) for other in others if other != text), default=0)
    start = text.rfind("-", 0, differs) + 1  # the word where it differs, whole
    head = "…" if start else ""
    room = width - len(head)
    if len(text) - start <= room:
        return head + text[start:]
    if differs - start < room - 1:  # the difference is in sight: cut the end only
        return head + text[start : start + room - 1] + "…"
    if len(text) - differs <= width - 1:  # it is in the tail: keep the tail
        return "…" + text[len(text) - (width - 1) :]
    return "…" + text[differs : differs + width - 2] + "…"


def _common(a: str, b: str) -> int:
    """The length of the prefix ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _state(s: SandboxView, launch_failed: bool) -> Text:
    if launch_failed:
        return Text("✗ discard failed", style="bold red")
    if s.in_use:
        return Text("● in use", style="bold cyan")
    if not s.exists:
        return Text("⚠ no worktree", style="bold red")
    return look.status(s.status)


def _row(s: SandboxView, launch_failed: bool) -> Row:
    return (
        s.id,
        (
            Text(s.id, style="bold"),
            s.mission_id,
            s.runtime or "-",
            s.kind,
            s.branch or "-",
            Text(s.base_commit[:7], style="dim"),
            look.ago(s.created_at),
            _state(s, launch_failed),
        ),
    )
