"""What every screen on the stack does when the logs move: the one contract the app uses.

The app hands each screen that is ``ready`` the new snapshot (``show``) and the new event
lines (``add_events``); a screen with no event pane takes the lines and ignores them. A
screen that did not implement both crashed the dashboard when an event arrived while it
was open; ``tests/tui/test_live_contract.py`` checks every screen class against this.

``showing`` says whether a screen may be touched at all: a screen being removed (popped,
or every screen while the app shuts down) has lost its widgets, and a launch that ends or
a read that finishes at that moment must leave it alone.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from textual.screen import Screen

from uh_core.workspace.state import Snapshot


@runtime_checkable
class LiveScreen(Protocol):
    ready: bool

    def show(self, snapshot: Snapshot) -> None: ...

    def add_events(self, lines: tuple[Any, ...]) -> None: ...


def showing(screen: object) -> bool:
    """True while ``screen`` is composed (``ready``), attached to the app and running, and
    not being removed: its widgets are there to update."""
    if not isinstance(screen, Screen) or not getattr(screen, "ready", False):
        return False
    if not (screen.is_attached and screen.is_running):
        return False
    # Textual marks a node it is removing (``_pruning``) or closing before its children go
    return not (screen._closing or screen._closed or screen._pruning)
