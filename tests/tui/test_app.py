"""The dashboard opens on what uh_core wrote, quits on q, and explains a missing .harness/."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from uh_core.init import init_project
from uh_core.layout import Layout
from uh_tui.app import UhApp

FIXED_ROOT = Path("/tmp/uh-tui-fixture")
SIZE = (100, 24)


@pytest.fixture
def workspace() -> Path:
    """Missions with verdicts, at a fixed path so snapshots are stable."""
    shutil.rmtree(FIXED_ROOT, ignore_errors=True)
    FIXED_ROOT.mkdir(parents=True)
    init_project(Layout(FIXED_ROOT))
    missions = FIXED_ROOT / ".harness/missions"
    for mission_id, command in (("alpha", "true"), ("beta", "false"), ("gamma", None)):
        (missions / mission_id).mkdir()
        ac = f"    check_command: '{command}'\n" if command else ""
        (missions / mission_id / "mission.yaml").write_text(
            f"id: {mission_id}\ntitle: Mission {mission_id}\n"
            f"acceptance_criteria:\n  - id: only\n{ac}"
        )
        subprocess.run(
            [sys.executable, "-m", "uh_core", "verify", mission_id, "--root", str(FIXED_ROOT)],
            capture_output=True,
            check=False,
        )
    (missions / "broken").mkdir()
    (missions / "broken" / "mission.yaml").write_text("id: broken\nstatus: [\n")
    yield FIXED_ROOT
    shutil.rmtree(FIXED_ROOT, ignore_errors=True)


def test_dashboard_snapshot(workspace: Path, snap_compare) -> None:
    assert snap_compare(UhApp(workspace), terminal_size=SIZE)


def test_no_harness_snapshot(snap_compare) -> None:
    empty = Path("/tmp/uh-tui-empty")
    empty.mkdir(exist_ok=True)
    assert snap_compare(UhApp(empty), terminal_size=SIZE)


def test_rows_and_quit(workspace: Path) -> None:
    app = UhApp(workspace)

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            table = app.screen.query_one("#missions")
            assert table.row_count == 4
            await pilot.press("q")

    asyncio.run(scenario())
    assert app.return_value is None and not app.is_running


def test_dashboard_picks_up_a_new_verdict(workspace: Path) -> None:
    asyncio.run(_new_verdict(workspace))


async def _new_verdict(workspace: Path) -> None:
    app = UhApp(workspace)
    async with app.run_test(size=SIZE) as pilot:
        (workspace / ".harness/missions/gamma/mission.yaml").write_text(
            "id: gamma\nacceptance_criteria:\n  - id: only\n    check_command: 'true'\n"
        )
        subprocess.run(
            [sys.executable, "-m", "uh_core", "verify", "gamma", "--root", str(workspace)],
            capture_output=True,
            check=True,
        )
        await pilot.press("ctrl+r")
        await pilot.pause()
        table = app.screen.query_one("#missions")
        assert str(table.get_row("gamma")[2]) == "passed"


def test_once_prints_one_text_frame(workspace: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--root", str(workspace)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "alpha" in result.stdout and "passed" in result.stdout and "failed" in result.stdout
    svg = tmp_path / "frame.svg"
    result = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--svg", str(svg), "--root", str(workspace)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0 and svg.read_text().startswith("<svg")
