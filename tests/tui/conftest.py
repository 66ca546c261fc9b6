"""Fixtures of the dashboard's tests: the fixed workspace, frozen time, a fake launcher."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.tui import fixtures
from tests.tui.fake_launcher import FakeLauncher
from uh_core.diff.stats import hunk_stats
from uh_core.promote.review import Group, Review
from uh_core.promote.source import Source, Verified
from uh_tui.app import UhApp

SIZE = (120, 36)


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("UH_FROZEN_TIME", fixtures.FROZEN)
    monkeypatch.delenv("UH_KEYMAP", raising=False)
    monkeypatch.setenv("UH_KEYMAP_FILE", "/nonexistent/uh-keymap.yaml")
    return fixtures.FROZEN


@contextlib.contextmanager
def fixed_path(root: Path) -> Iterator[Path]:
    """Hold ``root`` (a fixed path, so snapshots show the same path everywhere) for one test.

    Two test runs on one machine (a developer's and CI's) would otherwise build and delete
    the same folder under each other: an exclusive lock beside it serialises them.
    """
    with open(root.with_name(root.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            shutil.rmtree(root, ignore_errors=True)
            yield root
        finally:
            shutil.rmtree(root, ignore_errors=True)
            fcntl.flock(lock, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture workspace, built once per test process (as ``frozen`` has the clock) and
    copied for each test (fixtures.clone): a build is most of a test's setup."""
    template = tmp_path_factory.mktemp("uh-tui-built") / "uh-tui-fixture"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("UH_FROZEN_TIME", fixtures.FROZEN)
        fixtures.build(template)
    return template


@pytest.fixture
def workspace(
    frozen: str, built: Path, request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Path]:
    """The fixture workspace (see fixtures.py): at the fixed path /tmp/uh-tui-fixture for a
    snapshot test (the path is on screen), else in the test's own folder, so the tests that
    do not compare pictures run side by side instead of queueing for that one path."""
    if "snap_compare" not in request.fixturenames:
        root = tmp_path / "uh-tui-fixture"
        fixtures.clone(built, root)
        yield root
        return
    with fixed_path(fixtures.FIXED_ROOT) as root:
        fixtures.clone(built, root)
        yield root


@pytest.fixture
def launcher(workspace: Path) -> FakeLauncher:
    return FakeLauncher(workspace)


@pytest.fixture
def make_app(workspace: Path, launcher: FakeLauncher) -> Callable[..., UhApp]:
    def make(**kwargs: object) -> UhApp:
        kwargs.setdefault("launcher", launcher)
        return UhApp(workspace, **kwargs)  # type: ignore[arg-type]

    return make


@pytest.fixture
def reviewed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The review of alpha's sandbox as ``uh_core.promote.review`` would give it (the fixture
    workspace is not a git repository): its patch, verification and comparison group."""
    source = Source(
        kind="sandbox",
        mission_id="divide",
        base_commit=fixtures.BASE,
        tree="a" * 40,
        diff_hash="5f6c18574b018976",
        verified=Verified("passed", "verify-20260115T115500Z-sbx001", "verify --sandbox"),
        sandbox_id=fixtures.sandbox_id("alpha"),
        runtime="alpha",
    )
    group = Group("5f6c18574b018976", ("alpha", "beta"), True, "divergent", True)
    found = Review(source, fixtures.PATCH_AGREE, hunk_stats(fixtures.PATCH_AGREE), group=group)
    monkeypatch.setattr("uh_core.promote.review.review", lambda *args, **kwargs: found)


async def settle(pilot, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    """Wait until the reader's first update is on screen."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    while not app.data_ready.is_set():
        if time.monotonic() > deadline:
            raise AssertionError("no data from the reader")
        await asyncio.sleep(0.01)
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def until(pilot, check: Callable[[], object], timeout: float = 10.0, what: str = "") -> None:  # type: ignore[no-untyped-def]
    """Wait until ``check()`` is true (the view updated from events on disk)."""
    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause(0.02)
        try:
            if check():
                return
        except Exception:  # a widget not mounted yet
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")


async def frame(pilot) -> None:  # type: ignore[no-untyped-def]
    """Repaint the whole screen once more before a snapshot: how a frame is cut into
    segments depends on which partial repaints came before it, and the SVG shows that."""
    pilot.app.screen.refresh(layout=True)
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
