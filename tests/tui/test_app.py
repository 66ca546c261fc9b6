"""The dashboard opens on what uh_core wrote (real `uh-core verify` runs), quits on q,
explains a missing .harness/, and renders one frame headless."""

from __future__ import annotations

import asyncio
import io
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui.conftest import SIZE, frame, settle, until
from uh_core.init import init_project
from uh_core.layout import Layout
from uh_tui.app import UhApp


@pytest.fixture
def verified(tmp_path: Path) -> Iterator[Path]:
    """Missions with verdicts, in the test's own folder (no test of them compares a picture,
    so they need not queue for one fixed path)."""
    root = tmp_path / "uh-tui-verified"
    root.mkdir(parents=True)
    init_project(Layout(root))
    missions = root / ".harness/missions"
    for mission_id, command in (("alpha", "true"), ("beta", "false"), ("gamma", None)):
        (missions / mission_id).mkdir()
        ac = f"    check_command: '{command}'\n" if command else ""
        (missions / mission_id / "mission.yaml").write_text(
            f"id: {mission_id}\ntitle: Mission {mission_id}\n"
            f"acceptance_criteria:\n  - id: only\n{ac}"
        )
        subprocess.run(
            [sys.executable, "-m", "uh_core", "verify", mission_id, "--root", str(root)],
            capture_output=True,
            check=False,
        )
    (missions / "broken").mkdir()
    (missions / "broken" / "mission.yaml").write_text("id: broken\nstatus: [\n")
    yield root


def test_dashboard_snapshot(make_app, snap_compare) -> None:  # type: ignore[no-untyped-def]
    async def steady(pilot) -> None:  # type: ignore[no-untyped-def]
        await settle(pilot)
        await frame(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=steady)


def test_no_harness_snapshot(snap_compare) -> None:
    empty = Path("/tmp/uh-tui-empty")
    empty.mkdir(exist_ok=True)
    assert snap_compare(UhApp(empty), terminal_size=SIZE, run_before=frame)


def test_rows_and_quit(verified: Path) -> None:
    app = UhApp(verified)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            table = app.screen.query_one("#missions")
            assert table.row_count == 4
            await pilot.press("q")

    asyncio.run(scenario())
    assert app.return_value is None and not app.is_running


def test_dashboard_picks_up_a_new_verdict(verified: Path) -> None:
    """A verify run by someone else (not launched from the dashboard) shows up by itself."""
    asyncio.run(_new_verdict(verified))


async def _new_verdict(workspace: Path) -> None:
    app = UhApp(workspace)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        (workspace / ".harness/missions/gamma/mission.yaml").write_text(
            "id: gamma\nacceptance_criteria:\n  - id: only\n    check_command: 'true'\n"
        )
        subprocess.run(
            [sys.executable, "-m", "uh_core", "verify", "gamma", "--root", str(workspace)],
            capture_output=True,
            check=True,
        )
        table = app.screen.query_one("#missions")
        await until(pilot, lambda: "PASSED" in str(table.get_row("gamma")[2]), what="gamma passed")


def test_once_prints_one_text_frame(verified: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--root", str(verified)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "alpha" in result.stdout and "PASSED" in result.stdout and "FAILED" in result.stdout
    svg = tmp_path / "frame.svg"
    result = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--svg", str(svg), "--root", str(verified)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0 and svg.read_text().startswith("<svg")


def test_bad_command_lines_are_one_clear_line(tmp_path: Path) -> None:
    """A missing root or an SVG path in a folder that does not exist: exit 2, one line, no
    traceback, nothing written."""
    (tmp_path / ".harness").mkdir()
    for argv, words in (
        (["--root", str(tmp_path / "missing"), "--once"], "no such directory"),
        (["--root", str(tmp_path), "--once", "--svg", str(tmp_path / "no/dir/x.svg")], "--svg"),
        (["--view", "bogus", "--once"], "invalid choice"),
        (["--root", str(tmp_path), "--once", "--mission", "nosuch"], "--mission nosuch: no such"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "uh_tui", *argv], capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 2, (argv, result.stderr)
        assert words in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "no").exists()
    # no .harness/: the frame says so, and the exit code too (as every uh-core command's)
    bare = tmp_path / "bare"
    bare.mkdir()
    result = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--root", str(bare)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and ".harness" in result.stdout, result.stdout
    assert f"uh: error: no .harness/ in {bare}" in result.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_uh_demo_says_what_it_builds_before_the_app_starts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``uh demo`` builds for a few seconds: a progress line comes first (and a ticking clock
    on a terminal), not a blank screen."""
    from uh_tui import main as uh_main

    out = _Terminal()
    seen: list[str] = []

    def build(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        seen.append(out.getvalue())  # what the operator saw while it built
        deadline = time.monotonic() + 10
        while "\r" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)  # the clock ticks while it builds
        root = json.dumps({"root": str(tmp_path / "uh-demo")})
        return subprocess.CompletedProcess(argv, 0, root, "")

    monkeypatch.setattr(uh_main.subprocess, "run", build)
    assert uh_main.build_demo("uh-demo", out) == tmp_path / "uh-demo"
    assert seen[0].startswith("uh demo: building the demo workspace in uh-demo")
    shown = out.getvalue()
    assert re.search(r"\r +\d+\.\d s", shown), shown
    built = rf"uh demo: built {re.escape(str(tmp_path / 'uh-demo'))} in \d+\.\d s\n$"
    assert re.search(built, shown), shown
