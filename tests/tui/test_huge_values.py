"""The dashboard's cost to render a mission does not depend on the size of its values: every
value from a file is clipped (``uh_core.shown.clip``) before it reaches Rich or Textual. What
is asserted is the size of what the widgets are handed and of the frame (never a time:
``benchmarks/huge_values.py`` measures that)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Group
from rich.text import Text

from tests.conftest import Repo
from tests.tui.conftest import settle
from uh_core.shown import LINE
from uh_core.workspace.state import CriterionView, MissionView
from uh_tui.app import UhApp
from uh_tui.widgets import criteria_table, missions_table
from uh_tui.widgets.criterion_detail import SNIPPET_LINES, describe, tail_lines

MB = 1_000_000
MARK = "…[1,000,000 characters]"
# What a widget may hold for one value: shown.LINE characters and the marker, with room.
BOUND = LINE + 100


def _plain(renderable: object) -> list[str]:
    if isinstance(renderable, Group):
        return [text for part in renderable.renderables for text in _plain(part)]
    if isinstance(renderable, Text):
        return [renderable.plain]
    return [str(renderable)]


def _mission(repo: Repo, mission_id: str, description: str, title: str = "A title") -> None:
    repo.mission(
        mission_id,
        f"id: {mission_id}\ntitle: {title}\nobjective: o\nacceptance_criteria:\n"
        f"  - id: huge\n    description: {description}\n    check_command: 'true'\n"
        "  - id: small\n    description: a small one\n    check_command: 'true'\n",
    )


def test_the_criterion_pane_is_handed_clipped_values() -> None:
    criterion = CriterionView(
        "a" * MB,
        description="d" * MB,
        command="c " * MB,
        status="failed",
        stdout="o" * (10 * MB),
        stderr="e\n" * MB,
    )
    parts = _plain(describe(criterion))
    assert all(len(part) < 2 * SNIPPET_LINES * BOUND for part in parts)
    head, description, command = parts[:3]
    assert head.startswith("a" * 80 + "…[1,000,000 characters]")
    assert description == "d" * LINE + MARK
    assert command.startswith("$ c c") and len(command) <= 202
    stdout, stderr = parts[3:5]
    assert stdout.startswith("stdout\n…\n…") and len(stdout) < BOUND + 20
    assert stderr.count("\n") == SNIPPET_LINES + 1  # the label, "…", then twelve lines
    assert sum(len(p) for p in parts) < 4 * BOUND


def test_tail_lines_reads_only_the_end() -> None:
    assert tail_lines("a\nb\n") == ["a", "b"]
    lines = [str(n) for n in range(20)]
    assert tail_lines("\n".join(lines)) == ["…", *lines[-SNIPPET_LINES:]]
    long_last = "x" * (3 * LINE)
    assert tail_lines(f"first\n{long_last}") == ["first", long_last[:LINE] + "…[6,000 characters]"]
    [mark, end] = tail_lines("y" * (10 * MB))
    assert mark == "…" and end.startswith("…y") and len(end) < BOUND


def test_table_rows_are_handed_clipped_values() -> None:
    criterion = CriterionView("i" * MB, severity="s" * MB, status="passed", description="d" * MB)
    key, cells = criteria_table._row(criterion)
    assert key == "i" * MB  # the key is not shown
    assert all(len(str(cell)) < BOUND for cell in cells)
    mission = MissionView("m" * 300, title="t " * MB, criteria=(criterion,))
    key, cells = missions_table._row(mission, None, False)
    assert all(len(str(cell)) < BOUND for cell in cells)
    assert str(cells[-1]).endswith("…[2,000,000 characters]")
    failed = MissionView("bad", status="invalid", error="e" * (10 * MB))
    assert len(str(missions_table._row(failed, None, False)[1][-1])) < BOUND


@pytest.fixture
def huge(repo: Repo) -> Repo:
    _mission(repo, "big", "lorem ipsum " * (MB // 12))
    return repo


def test_the_dashboard_hands_its_widgets_clipped_values(huge: Repo) -> None:
    """In the running app: the selected mission's criteria, its detail pane and the
    missions table hold clipped values only."""
    app = UhApp(huge.root, mission="big")

    async def scenario() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            await pilot.pause()
            for table_id in ("#missions", "#criteria"):
                table = app.screen.query_one(table_id)
                assert table.row_count >= 1  # type: ignore[attr-defined]
                for key in table.rows:  # type: ignore[attr-defined]
                    for cell in table.get_row(key):  # type: ignore[attr-defined]
                        assert len(str(cell)) < BOUND
            content = app.screen.query_one("#criterion-text").content  # type: ignore[attr-defined]
            shown = _plain(content)
            assert shown[1].endswith(" characters]") and "…[999," in shown[1], shown[:2]
            assert sum(len(part) for part in shown) < 2 * BOUND
            await pilot.press("q")

    asyncio.run(scenario())


def _once(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--root", str(root), "--mission", "big"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_uh_once_on_a_1_mb_description_is_the_frame_of_a_small_one(
    huge: Repo, tmp_path: Path
) -> None:
    small_root = tmp_path / "small"
    small = Repo(small_root)
    small_root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=small_root, check=True)
    from uh_core.init import init_project
    from uh_core.layout import Layout

    init_project(Layout(small_root))
    _mission(small, "big", "lorem ipsum")
    big_frame, small_frame = _once(huge.root), _once(small_root)
    for done in (big_frame, small_frame):
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "huge" in big_frame.stdout and "lorem ipsum" in big_frame.stdout
    # one frame, the same size whatever the description holds
    assert abs(len(big_frame.stdout) - len(small_frame.stdout)) < 200
    assert big_frame.stdout.count("\n") == small_frame.stdout.count("\n")


def test_a_description_over_the_cap_is_one_invalid_row(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100 MB is refused by UH_YAML_MAX_BYTES before it is read (here the cap is lowered to
    1 MB and the file is just over it; a value just under it renders, clipped)."""
    monkeypatch.setenv("UH_YAML_MAX_BYTES", str(MB))
    _mission(repo, "big", "x" * (MB + 10))
    _mission(repo, "fits", "y" * (MB - 1000))
    done = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--root", str(repo.root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    big = next(line for line in done.stdout.splitlines() if " big " in line)
    assert "invalid" in big and "refused" in big
    assert "fits" in done.stdout
    from uh_core.workspace.store import Store

    store = Store(repo.root)
    store.full()
    error = store.snapshot.mission("big").error or ""
    assert "UH_YAML_MAX_BYTES" in error and len(error) < 600
    [fits] = store.snapshot.mission("fits").criteria[:1]
    assert len(fits.description) == MB - 1000  # the model keeps it; the widgets clip it
