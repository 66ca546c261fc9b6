"""Textual's footer, whose keys take two rows in a narrow terminal (``Screen.-narrow`` in
app.tcss lays it out as a grid) instead of running off the right edge.

Textual recomposes the footer after the next refresh each time the screen's bindings may
have changed (a screen pushed, a focus, a tab): the first screen queues six or more, 40 ms
and up each, and as nothing refreshes an idle dashboard they all ran on the frames of the
first events to arrive (benchmarks/tui_latency.py: the first second of a live stream was
several times slower than the rest). Here one recompose is queued at a time, and it runs
only when the keys it would show differ from those shown.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer


class UhFooter(Footer):
    def __init__(self) -> None:
        super().__init__()
        self._shown: object = None  # the keys the footer was composed with
        self._queued = False

    def compose(self) -> ComposeResult:
        self._shown = self._keys()
        yield from super().compose()
        # Footer sets one grid column per key; two rows hold them all at 80 columns
        keys = self.styles.grid_size_columns or 1
        self.styles.grid_size_columns = max((keys + 1) // 2, 1)

    def bindings_changed(self, screen: Screen[object]) -> None:
        # Footer.bindings_changed, with one recompose queued at a time
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._queued:
            self._queued = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._queued = False
        if self.is_attached and self._keys() != self._shown:
            await self.recompose()

    def _keys(self) -> object:
        """What compose shows: every active binding (shown or not: the command palette's
        is looked up by key) with whether it is enabled, and the footer's own options."""
        if not self._bindings_ready:
            return None
        return (
            tuple(
                (key, binding, enabled, tooltip)
                for key, (_, binding, enabled, tooltip) in self.screen.active_bindings.items()
            ),
            self.compact,
            self.show_command_palette,
        )
