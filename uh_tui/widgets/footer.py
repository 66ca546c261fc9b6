"""Textual's footer, whose keys take two rows in a narrow terminal (``Screen.-narrow`` in
app.tcss lays it out as a grid) instead of running off the right edge."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer


class UhFooter(Footer):
    def compose(self) -> ComposeResult:
        yield from super().compose()
        # Footer sets one grid column per key; two rows hold them all at 80 columns
        keys = self.styles.grid_size_columns or 1
        self.styles.grid_size_columns = max((keys + 1) // 2, 1)
