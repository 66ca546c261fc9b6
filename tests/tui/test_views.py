"""Snapshots of every view on the fixed workspace (tests/tui/fixtures.py), 120×36, time frozen.

A snapshot is taken once the reader's first update is on screen (``settle``). Update them
with ``python -m pytest tests/tui --snapshot-update`` after a deliberate layout change, and
look at the report before committing.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.tui.conftest import SIZE, frame, settle, until
from tests.tui.fake_launcher import FakeLauncher
from uh_tui.app import UhApp
from uh_tui.watch import WatchError


def steady(run_before):  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await run_before(pilot)
        await frame(pilot)

    return run


def test_missions_view(make_app: Callable[..., UhApp], snap_compare) -> None:
    """Badges, verdicts, live indicators (a verify and a harness run in progress, a runtime
    running), an invalid mission and a malformed log; the first mission's criteria."""
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(settle))


def test_missions_view_live_criteria(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def select_changelog(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("down", "down")  # broken, changelog

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(select_changelog))


def test_criterion_snippets(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def failed_criterion(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("down", "down", "down", "tab")  # divide, criteria: divide-works

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(failed_criterion))


def test_runtimes_view(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def runtimes(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("2")

    assert snap_compare(make_app(mission="divide"), terminal_size=SIZE, run_before=steady(runtimes))


def test_runtime_diff(make_app: Callable[..., UhApp], snap_compare) -> None:
    """enter on a runtime: per-file +/− counts and the coloured patch from its sandbox."""

    async def diff(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("2", "down", "down", "enter")  # gamma
        await until(pilot, lambda: pilot.app.screen.query_one("#runtime-files").row_count == 4)

    assert snap_compare(make_app(mission="divide"), terminal_size=SIZE, run_before=steady(diff))


def test_harness_view(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def harness(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("3")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(harness))


def test_sandboxes_view(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def sandboxes(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("4")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(sandboxes))


def test_mission_screen(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def drill(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("enter")

    assert snap_compare(make_app(mission="divide"), terminal_size=SIZE, run_before=steady(drill))


def test_help_overlay(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def help_keys(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("question_mark")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(help_keys))


def test_run_picker(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def picker(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("r")

    assert snap_compare(make_app(mission="divide"), terminal_size=SIZE, run_before=steady(picker))


def test_discard_confirm(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def confirm(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("4", "d")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(confirm))


def test_filter(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def typed(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("slash", "d", "i", "v")

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(typed))


def test_launch_error_in_place(
    make_app: Callable[..., UhApp], launcher: FakeLauncher, snap_compare
) -> None:
    launcher.fail["verify"] = "uh-core: error: .harness/missions/divide/mission.yaml: cannot read"

    async def failed(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("v")
        await until(pilot, lambda: pilot.app.launch_errors)

    assert snap_compare(make_app(mission="divide"), terminal_size=SIZE, run_before=steady(failed))


def test_watcher_warning(make_app: Callable[..., UhApp], snap_compare) -> None:
    async def broken_watcher(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        pilot.app._reader.inbox.put(WatchError("file watcher stopped: inotify watch limit reached"))
        await until(pilot, lambda: pilot.app.warning)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady(broken_watcher))
