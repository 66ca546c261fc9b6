"""``q`` never blocks: with nothing running it quits at once; while a launched command runs it
asks whether to leave it running or cancel it, and the answer lets the app go without
waiting for the command. A command left running is its own session and outlives the app."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tui.conftest import SIZE, settle, until
from tests.tui.fake_launcher import FakeLauncher
from uh_tui.app import UhApp
from uh_tui.launch import Launch, Launcher, LaunchResult
from uh_tui.screens.quit import QuitScreen


def _quit_with(app: UhApp, answer: str | None, started: Callable[[], bool]) -> float:
    """Start the app, wait for ``started``, press q and then ``answer``: the seconds from
    the answer until the app is gone (the whole shutdown, threads included)."""
    answered = [0.0]

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("h")
            await until(pilot, started, what="the launch")
            await pilot.press("q")
            await until(pilot, lambda: isinstance(app.screen, QuitScreen), what="the question")
            assert f"uh-core harness run --root {app.root}".replace(" ", "") in "".join(
                app.export_text().split()
            )
            if answer is None:
                await pilot.press("escape")
                await pilot.pause(0.2)
                assert app.is_running and not isinstance(app.screen, QuitScreen)
                return
            answered[0] = time.monotonic()
            await pilot.press(answer)
            deadline = time.monotonic() + 5
            while app.is_running and time.monotonic() < deadline:
                await asyncio.sleep(0.01)

    asyncio.run(main())
    return time.monotonic() - answered[0]


@pytest.fixture
def held(launcher: FakeLauncher) -> FakeLauncher:
    """The harness launch runs until the app lets it go (or 60 s pass: a safety net, so a
    broken quit fails instead of hanging; a quit that waited for the launch to end is one
    that ends only after it: ``finish`` is then set)."""
    launcher.hold.add("harness")
    timer = threading.Timer(60, launcher.finish.set)
    timer.start()
    yield launcher
    timer.cancel()


def test_q_then_leave_running(make_app: Callable[..., UhApp], held: FakeLauncher) -> None:
    app = make_app()
    took = _quit_with(app, "l", lambda: bool(held.launches))
    assert held.released == "leave" and not app.is_running
    assert not held.finish.is_set(), f"quitting waited for the launch to end ({took:.1f} s)"


def test_q_then_cancel(make_app: Callable[..., UhApp], held: FakeLauncher) -> None:
    app = make_app()
    took = _quit_with(app, "c", lambda: bool(held.launches))
    assert held.released == "cancel" and not app.is_running
    assert not held.finish.is_set(), f"quitting waited for the launch to end ({took:.1f} s)"


def test_q_then_stay(make_app: Callable[..., UhApp], held: FakeLauncher) -> None:
    app = make_app()
    _quit_with(app, None, lambda: bool(held.launches))
    assert held.released in (None, "leave")  # the app ends after the test: it lets go then


# waits until ``<marker>.go`` exists (the test says when) or ``seconds`` pass, then marks
WAIT_THEN_MARK = (
    "import os, sys, time\n"
    "try:\n"
    "    deadline = time.monotonic() + float(sys.argv[2])\n"
    "    while time.monotonic() < deadline and not os.path.exists(sys.argv[1] + '.go'):\n"
    "        time.sleep(0.02)\n"
    "    open(sys.argv[1], 'w').write('done')\n"
    "except KeyboardInterrupt:\n"
    "    open(sys.argv[1], 'w').write('interrupted')\n"
    "    sys.exit(130)\n"
)


class OneCommand(Launcher):
    """The real launcher, starting ``command`` whatever the key asked for."""

    def __init__(self, command: tuple[str, ...]) -> None:
        super().__init__()
        self.command = command

    def launch(self, launch: Launch) -> LaunchResult:
        return super().launch(Launch(launch.action, launch.target, self.command))


def _real(workspace: Path, marker: Path, seconds: float) -> tuple[UhApp, OneCommand]:
    launcher = OneCommand((sys.executable, "-c", WAIT_THEN_MARK, str(marker), str(seconds)))
    return UhApp(workspace, launcher=launcher), launcher


def _wait_for(path: Path, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return path.read_text()
        time.sleep(0.05)
    return ""


def test_a_command_left_running_outlives_the_app(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    app, launcher = _real(workspace, marker, 30)
    pids: list[int] = []

    def started() -> bool:
        pids.extend(launcher.pids)
        return bool(pids)

    _quit_with(app, "l", started)
    assert os.getsid(pids[0]) == pids[0]  # its own session: nothing of ours reaches it
    # the app is gone and the command still at work: quitting did not wait for it
    assert marker.exists() is False or marker.read_text() == ""
    marker.with_name("marker.go").touch()  # it may finish now: it was not stopped
    assert _wait_for(marker, 30) == "done"


def test_cancel_interrupts_the_command(workspace: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    app, launcher = _real(workspace, marker, 30)
    _quit_with(app, "c", lambda: bool(launcher.pids))
    # interrupted (not "done" 30 s later: quitting did not wait for it), as by Ctrl-C, even when this test runs with SIGINT ignored (a background job)
    assert _wait_for(marker, 5) == "interrupted"
