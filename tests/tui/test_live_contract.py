"""Every screen that shows live data implements the one contract the app uses when the logs
move (``show`` and ``add_events``): an event arriving while any screen is open must not
crash the dashboard (it did, with the runtime diff screen open)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil

from textual.screen import ModalScreen, Screen

import uh_tui.screens
from tests.tui.conftest import SIZE, settle, until
from uh_core.workspace.state import Update
from uh_tui import launch as launches
from uh_tui.launch import LaunchResult
from uh_tui.screens.live import LiveScreen
from uh_tui.screens.review import ReviewScreen


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


def test_nothing_touches_a_screen_that_is_being_removed(make_app) -> None:  # type: ignore[no-untyped-def]
    """A launch that ends (or an update that arrives, or a review that finishes reading)
    while screens are being removed — the app shutting down, a screen just closed — must
    leave those screens alone: their widgets are gone (``NoMatches('#review-head')`` made
    test_review flaky on a busy machine)."""
    app = make_app(view="sandboxes")
    errors: list[Exception] = []

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("p")
            await until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="review")
            closed = app.screen
            assert isinstance(closed, ReviewScreen)
            await until(pilot, lambda: closed.problem is not None, what="the review read")
            await pilot.press("escape")
            await until(pilot, lambda: not closed.is_running, what="the review closed")
            closed._failed("read again after it closed")  # a late reader: no NoMatches

            await pilot.press("p")
            await until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="review")
            review = app.screen
            close_all = app._close_all

            async def shutting_down() -> None:
                # the top screen goes first; then a launch ends and the reader delivers
                await app._prune(review)
                try:
                    app._launched(LaunchResult(launches.verify(app.root, "divide"), 0))
                    app.apply(Update(app.snapshot))
                except Exception as exc:  # what the app would have died of
                    errors.append(exc)
                await close_all()

            app._close_all = shutting_down  # type: ignore[method-assign]

    asyncio.run(main())
    assert errors == []
    assert app.results and app.results[-1].returncode == 0
