"""What every screen on the stack does when the logs move: the one contract the app uses.

The app hands each screen that is ``ready`` the new snapshot (``show``) and the new event
lines (``add_events``); a screen with no event pane takes the lines and ignores them. A
screen that did not implement both crashed the dashboard when an event arrived while it
was open; ``tests/tui/test_live_contract.py`` checks every screen class against this.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from uh_core.workspace.state import Snapshot


@runtime_checkable
class LiveScreen(Protocol):
    ready: bool

    def show(self, snapshot: Snapshot) -> None: ...

    def add_events(self, lines: tuple[Any, ...]) -> None: ...
