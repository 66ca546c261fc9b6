"""Every screen that shows live data implements the one contract the app uses when the logs
move (``show`` and ``add_events``): an event arriving while any screen is open must not
crash the dashboard (it did, with the runtime diff screen open)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from textual.screen import ModalScreen, Screen

import uh_tui.screens
from uh_tui.screens.live import LiveScreen


def _screens() -> list[type[Screen[object]]]:
    found = []
    for info in pkgutil.iter_modules(uh_tui.screens.__path__):
        module = importlib.import_module(f"uh_tui.screens.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, Screen) and cls.__module__ == module.__name__:
                found.append(cls)
    return found


def test_every_full_screen_takes_snapshots_and_events() -> None:
    screens = [cls for cls in _screens() if not issubclass(cls, ModalScreen)]
    assert {cls.__name__ for cls in screens} >= {
        "DashboardScreen", "MissionScreen", "RuntimeScreen", "ReviewScreen",
    }  # fmt: skip
    for cls in screens:
        live = [name for name in ("show", "add_events") if callable(getattr(cls, name, None))]
        # a screen shows live data with both, or is static (NoHarnessScreen) with neither
        assert live in ([], ["show", "add_events"]), f"{cls.__name__} has only {live}"


def test_the_protocol_is_what_the_app_checks() -> None:
    class Partial:
        ready = True

        def show(self, snapshot: object) -> None: ...

    assert not isinstance(Partial(), LiveScreen)
