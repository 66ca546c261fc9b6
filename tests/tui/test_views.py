"""Snapshots of every view on the fixed workspace (tests/tui/fixtures.py), time frozen, at
80×24 (the smallest supported terminal: every view shows its first rows and its keys) and
160×48.

A snapshot is taken once the reader's first update is on screen (``settle``). Update them
with ``python -m pytest tests/tui --snapshot-update`` after a deliberate layout change, and
look at the report before committing.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.tui import fixtures
from tests.tui.conftest import frame, settle, until
from tests.tui.fake_launcher import FakeLauncher
from uh_tui.app import UhApp
from uh_tui.screens.messages import MessagesScreen
from uh_tui.screens.quit import QuitScreen
from uh_tui.screens.review import ReviewScreen
from uh_tui.watch import WatchError

SIZES = [(80, 24), (160, 48)]
pytestmark = pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])


def steady(run_before):  # type: ignore[no-untyped-def]
    async def run(pilot) -> None:  # type: ignore[no-untyped-def]
        await run_before(pilot)
        await frame(pilot)

    return run


def test_missions_view(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    """Badges, verdicts, live indicators (a verify and a harness run in progress, a runtime
    running), an invalid mission and a malformed log; the first mission's criteria."""
    assert snap_compare(make_app(), terminal_size=size, run_before=steady(settle))


def test_missions_view_live_criteria(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def select_changelog(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("down", "down")  # broken, changelog

    assert snap_compare(make_app(), terminal_size=size, run_before=steady(select_changelog))


def test_criterion_snippets(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def failed_criterion(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("down", "down", "down", "tab")  # divide, criteria: divide-works

    assert snap_compare(make_app(), terminal_size=size, run_before=steady(failed_criterion))


def test_runtimes_view(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def runtimes(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("2")

    assert snap_compare(make_app(mission="divide"), terminal_size=size, run_before=steady(runtimes))


def test_runtime_diff(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    """enter on a runtime: per-file +/− counts and the coloured patch from its sandbox."""

    async def diff(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("2", "down", "down", "enter")  # gamma
        await until(pilot, lambda: pilot.app.screen.query_one("#runtime-files").row_count == 4)

    assert snap_compare(make_app(mission="divide"), terminal_size=size, run_before=steady(diff))


def test_harness_view(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def harness(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("3")

    assert snap_compare(make_app(), terminal_size=size, run_before=steady(harness))


def test_interrupted_missions(
    workspace: Path, make_app: Callable[..., UhApp], snap_compare, size
) -> None:  # type: ignore[no-untyped-def]
    """Every owner gone (``fixtures.interrupt``): changelog's verify and harness run and
    divide's epsilon run read interrupted, each with when it was last seen."""
    fixtures.interrupt(workspace)

    async def select_changelog(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("down", "down")  # broken, changelog

    assert snap_compare(make_app(), terminal_size=size, run_before=steady(select_changelog))


def test_interrupted_harness(
    workspace: Path, make_app: Callable[..., UhApp], snap_compare, size
) -> None:  # type: ignore[no-untyped-def]
    fixtures.interrupt(workspace)

    async def harness(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("3")

    assert snap_compare(make_app(), terminal_size=size, run_before=steady(harness))


def test_sandboxes_view(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def sandboxes(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("4")

    assert snap_compare(make_app(), terminal_size=size, run_before=steady(sandboxes))


def test_mission_screen(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def drill(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("enter")

    assert snap_compare(make_app(mission="divide"), terminal_size=size, run_before=steady(drill))


def test_help_overlay(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def help_keys(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("question_mark")

    assert snap_compare(make_app(), terminal_size=size, run_before=steady(help_keys))


def test_run_picker(make_app: Callable[..., UhApp], snap_compare, size, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # The picker marks what can run here: only this interpreter and the system's tools, so
    # an agent CLI installed on this machine's PATH does not change the picture.
    monkeypatch.setenv(
        "PATH", os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"])
    )

    async def picker(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("r")

    assert snap_compare(make_app(mission="divide"), terminal_size=size, run_before=steady(picker))


def test_discard_confirm(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def confirm(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("4", "d")

    assert snap_compare(make_app(), terminal_size=size, run_before=steady(confirm))


def test_filter(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def typed(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("slash", "d", "i", "v")

    assert snap_compare(make_app(), terminal_size=size, run_before=steady(typed))


def test_launch_error_in_place(
    make_app: Callable[..., UhApp], launcher: FakeLauncher, snap_compare, size
) -> None:  # type: ignore[no-untyped-def]
    launcher.fail["verify"] = "uh-core: error: .harness/missions/divide/mission.yaml: cannot read"

    async def failed(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("v")
        await until(pilot, lambda: pilot.app.launch_errors)

    assert snap_compare(make_app(mission="divide"), terminal_size=size, run_before=steady(failed))


def test_watcher_warning(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def broken_watcher(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        pilot.app._reader.inbox.put(WatchError("file watcher stopped: inotify watch limit reached"))
        await until(pilot, lambda: pilot.app.warning)

    assert snap_compare(make_app(), terminal_size=size, run_before=steady(broken_watcher))


@pytest.mark.usefixtures("reviewed")
def test_review_screen(make_app: Callable[..., UhApp], snap_compare, size) -> None:  # type: ignore[no-untyped-def]
    async def review(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("2", "p")  # alpha's sandbox
        await until(pilot, lambda: isinstance(pilot.app.screen, ReviewScreen))
        await until(pilot, lambda: pilot.app.screen.review is not None, what="the change")

    assert snap_compare(make_app(mission="divide"), terminal_size=size, run_before=steady(review))


NO_AGENT = (
    "uh-core: error: no agent to run (fix: pass --agent 'cmd {prompt_file}' or --runtime R, "
    "or set agent: or runtime: in .harness/harness.config.yaml and commit it)"
)


def test_message_log(
    make_app: Callable[..., UhApp], launcher: FakeLauncher, snap_compare, size
) -> None:  # type: ignore[no-untyped-def]
    """A refused launch with a long fix hint (wrapped) and a verify with its whole output."""
    launcher.fail["harness"] = NO_AGENT
    launcher.stdout["verify"] = (
        "[FAIL] divide\nacceptance: 1 passed, 2 block-failed, 0 warn-failed, 0 blocked\n"
        "result: .harness/missions/divide/verification.yaml\n"
    )

    async def messages(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("h")
        await until(pilot, lambda: pilot.app.launch_errors, what="the refusal")
        await pilot.press("v")
        await until(pilot, lambda: len(pilot.app.results) == 2, what="verify")
        await pilot.press("m")
        await until(pilot, lambda: isinstance(pilot.app.screen, MessagesScreen))

    assert snap_compare(make_app(mission="divide"), terminal_size=size, run_before=steady(messages))


@pytest.fixture
def held(launcher: FakeLauncher) -> Iterator[FakeLauncher]:
    launcher.hold.add("verify")
    timer = threading.Timer(60, launcher.finish.set)  # never hang on a broken quit
    timer.start()
    yield launcher
    timer.cancel()


def test_quit_while_running(
    make_app: Callable[..., UhApp], held: FakeLauncher, snap_compare, size
) -> None:  # type: ignore[no-untyped-def]
    async def asked(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await pilot.press("v")
        await until(pilot, lambda: held.launches, what="the launch")
        await pilot.press("q")
        await until(pilot, lambda: isinstance(pilot.app.screen, QuitScreen))

    assert snap_compare(make_app(mission="divide"), terminal_size=size, run_before=steady(asked))
