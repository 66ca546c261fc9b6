"""A DataTable whose rows are set by key: unchanged cells are left alone, the cursor stays
on the same row, and a full rebuild happens only when rows come, go or move (a column that
needs another width — the pane resized — is changed in place).

Column widths are computed here from every cell (capped by ``MAX_WIDTHS``) rather than
measured by DataTable when idle, so a frame never shows a column at a stale width (and
snapshots do not depend on when the idle measurement ran).

A table holds at most ``PAGE`` (120) rows (a window of all it was given, around the selected
row): a thousand missions or two thousand runs cost what a page costs to lay out, and the
cursor walks on past either edge of the window (up, down, page up/down, ctrl+home, ctrl+end), which
moves. The bottom border says which rows are shown (``rows 61–180 of 1,004``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey

Cell = Text | str
Row = tuple[str, tuple[Cell, ...]]


class LazyRows:
    """Rows made only when shown: their keys, and how to make the row at an index. A table
    of two thousand runs makes the 120 it lays out, not the two thousand."""

    def __init__(self, keys: Sequence[str], make: Callable[[int], Row]) -> None:
        self.keys = list(keys)
        self._make = make

    def __len__(self) -> int:
        return len(self.keys)

    def rows(self, start: int, stop: int) -> list[Row]:
        return [self._make(i) for i in range(start, min(stop, len(self.keys)))]

    def index(self, key: str | None) -> int | None:
        if key is None:
            return None
        try:
            return self.keys.index(key)
        except ValueError:
            return None


def _ellipsis(cell: Cell, width: int) -> Cell:
    if _width(cell) <= width:
        return cell
    text = cell.copy() if isinstance(cell, Text) else Text(str(cell))
    text.truncate(width, overflow="ellipsis")
    return text


def _width(cell: Cell) -> int:
    text = cell.plain if isinstance(cell, Text) else str(cell)
    return max((cell_len(line) for line in text.splitlines()), default=0)


class KeyedTable(DataTable[Cell]):
    COLUMNS: tuple[tuple[str, str], ...] = ()  # (key, label)
    MAX_WIDTHS: dict[str, int] = {}
    FLEX: str | None = None  # the column that takes (at most) the width left over
    # columns that give up width, in this order, when the table is wider than its pane (a
    # narrow terminal): no horizontal scrollbar eats a row, every column stays in sight
    SHRINK: tuple[str, ...] = ()
    MIN_WIDTH = 5
    MIN_WIDTHS: dict[str, int] = {}  # a column that gives way only down to this (else MIN_WIDTH)
    PAGE = 120  # rows laid out at once: the window of all rows given (a tall terminal's 2×)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self._rows: list[Row] = []  # the rows shown: the window
        self._all: LazyRows = LazyRows([], lambda i: ("", ()))  # every row given
        self._first = 0  # the window's first row in _all
        self._listed: list[Row] = []  # the rows last given as a list (to skip a repeat)
        self._widths: list[int] = []

    def on_mount(self) -> None:
        for key, label in self.COLUMNS:
            self.add_column(label, key=key, width=cell_len(label))
        self._widths = [cell_len(label) for _, label in self.COLUMNS]

    @property
    def selected_key(self) -> str | None:
        if not self._rows or self.cursor_row < 0:
            return None
        return self._rows[min(self.cursor_row, len(self._rows) - 1)][0]

    @property
    def total_rows(self) -> int:
        """Every row given (``row_count`` is the window's)."""
        return len(self._all)

    def select_key(self, key: str) -> None:
        for index, (row_key, _) in enumerate(self._rows):
            if row_key == key:
                self.move_cursor(row=index)
                return
        where = self._all.index(key)
        if where is not None:  # outside the window: the window moves to it
            self._window(where - self.PAGE // 2, key)

    def _window(self, first: int, key: str | None) -> None:
        """Show ``_all`` from ``first`` (clamped), the cursor on ``key``."""
        first = max(0, min(first, len(self._all) - self.PAGE))
        self._first = first
        self._set_rows(self._all.rows(first, first + self.PAGE), keep=key)
        self._label()

    def _label(self) -> None:
        if len(self._all) <= self.PAGE:
            label = ""
        else:
            last = self._first + len(self._rows)
            label = f"rows {self._first + 1:,}–{last:,} of {len(self._all):,}"
        if getattr(self, "_paged_label", "") != label:
            self._paged_label = label
            self.border_subtitle = label

    def _edge(self, step: int) -> bool:
        """The cursor going ``step`` rows on past the window's edge: move the window (True)."""
        if len(self._all) <= self.PAGE or not self._rows:
            return False
        row = self.cursor_row
        if 0 <= row + step < len(self._rows):
            return False  # within the window: the table moves the cursor
        target = max(0, min(self._first + row + step, len(self._all) - 1))
        if target == self._first + row:
            return False  # at the first or last row of all
        self._window(target - self.PAGE // 2, self._all.keys[target])
        return True

    def action_cursor_down(self) -> None:
        if not self._edge(1):
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        if not self._edge(-1):
            super().action_cursor_up()

    def action_page_down(self) -> None:
        if not self._edge(max(self.scrollable_content_region.height - 1, 1)):
            super().action_page_down()

    def action_page_up(self) -> None:
        if not self._edge(-max(self.scrollable_content_region.height - 1, 1)):
            super().action_page_up()

    def action_scroll_bottom(self) -> None:
        if len(self._all) > self.PAGE:
            self._window(len(self._all), self._all.keys[-1])
        super().action_scroll_bottom()

    def action_scroll_top(self) -> None:
        if len(self._all) > self.PAGE:
            self._window(0, self._all.keys[0])
        super().action_scroll_top()

    def _fit(self, rows: list[Row]) -> list[int]:
        widths = []
        for index, (key, label) in enumerate(self.COLUMNS):
            width = max([cell_len(label), *(_width(cells[index]) for _, cells in rows)])
            widths.append(min(width, self.MAX_WIDTHS.get(key, width)))
        keys = [key for key, _ in self.COLUMNS]
        room = self.scrollable_content_region.width
        if room <= 0:
            return widths
        padding = 2 * self.cell_padding * len(widths) + 2  # + a vertical scrollbar's worth
        if self.FLEX in keys:
            flex = keys.index(self.FLEX)
            used = sum(w for i, w in enumerate(widths) if i != flex) + padding
            widths[flex] = max(min(widths[flex], room - used), cell_len(self.COLUMNS[flex][1]))
        over = sum(widths) + padding - room
        for key in self.SHRINK:
            if over <= 0:
                break
            index = keys.index(key)
            floor = self.MIN_WIDTHS.get(key, self.MIN_WIDTH)
            give = min(max(widths[index] - floor, 0), over)
            widths[index] -= give
            over -= give
        return widths

    def _cut(self, cells: Sequence[Cell], widths: list[int]) -> list[Cell]:
        """Cells as shown: one wider than its column ends with an ellipsis."""
        columns = [key for key, _ in self.COLUMNS]
        return [
            self._cell(column, cell, width)
            for column, cell, width in zip(columns, cells, widths, strict=True)
        ]

    def _cell(self, column: str, cell: Cell, width: int) -> Cell:
        """``cell`` of ``column`` in ``width`` columns (a table may cut a column otherwise)."""
        return _ellipsis(cell, width)

    def on_resize(self) -> None:
        if self._rows and self._fit(self._rows) != self._widths:
            self._set_rows(self._rows)  # the same rows at the new widths, in place

    def set_rows(self, rows: Sequence[Row] | LazyRows) -> None:
        """Every row (or ``LazyRows``: only the window's are made); the window stays on the
        selected row."""
        if not isinstance(rows, LazyRows):
            given = list(rows)
            if given == self._listed and given:
                # nothing to change (the pane's width is followed by on_resize): a live
                # stream re-sends the same rows with every event, and fitting them costs
                return
            self._listed = given
            rows = LazyRows([key for key, _ in given], given.__getitem__)
        else:
            self._listed = []
        self._all = rows
        if len(rows) <= self.PAGE:
            self._first = 0
            self._set_rows(rows.rows(0, len(rows)))
            self._label()
            return
        keep = self.selected_key
        where = rows.index(keep)
        first = self._first
        if where is not None and not first <= where < first + self.PAGE:
            first = where - self.PAGE // 2
        self._window(first, keep)

    def _set_rows(self, rows: list[Row], keep: str | None = None) -> None:
        widths = self._fit(rows)
        if [k for k, _ in rows] == [k for k, _ in self._rows] and self._rows:
            # the same rows: change what changed in place, so the cursor stays where it is
            # (a rebuild before the first layout lost a selection that had not stuck yet)
            resized = widths != self._widths
            if resized:
                self._set_widths(widths)
                self._require_update_dimensions = True  # the virtual size follows the widths
            columns = [key for key, _ in self.COLUMNS]
            for (key, cells), (_, old) in zip(rows, self._rows, strict=True):
                for index, (column, new, before) in enumerate(
                    zip(columns, cells, old, strict=True)
                ):
                    if resized or new != before:
                        self.update_cell(key, column, self._cell(column, new, widths[index]))
            self._rows = rows
            return
        keep = keep or self.selected_key
        self.clear()
        self._set_widths(widths)
        for key, cells in rows:
            self.add_row(*self._cut(cells, widths), key=key)
        self._rows = rows
        if keep is not None:
            self.select_key(keep)

    def _set_widths(self, widths: list[int]) -> None:
        for (name, label), width in zip(self.COLUMNS, widths, strict=True):
            spec = self.columns[ColumnKey(name)]
            spec.width = width
            spec.auto_width = False
            spec.label = Text(label)
            spec.label.truncate(width, overflow="ellipsis")
        self._widths = widths
