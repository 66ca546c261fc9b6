"""A promotion killed at each step leaves either nothing or a journal the next promote or
status finishes, and says so: never a half-moved checkout with no record."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.promote.conftest import GOOD, Project


def _killed_at(project: Project, stage: str, sandbox: str, tmp_path: Path) -> None:
    marker = tmp_path / f"paused-{stage}"
    env = {**os.environ, "UH_TEST_PAUSE_PROMOTION": stage, "UH_TEST_PAUSE_MARKER": str(marker)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uh_core", "promote", "calc", "--approved-by", "ada",
         "--sandbox", sandbox, "--force", "--root", str(project.root)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert marker.exists(), f"never reached {stage}"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def test_killed_before_the_branch_moves_leaves_nothing(project: Project, tmp_path: Path) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    before = project.picture()
    _killed_at(project, "journaled", entry.id, tmp_path)
    status = project.repo.uh("status")
    assert status.code == 0 and "rolled back the interrupted promotion of calc" in status.stderr
    assert project.picture() == before
    assert not (project.root / ".harness/missions/calc/promotion.yaml").exists()
    assert not (project.root / ".harness/promotion.journal.json").exists()


@pytest.mark.parametrize("stage", ["moved", "checked-out"])
def test_killed_after_the_branch_moved_is_finished_by_the_next_command(
    project: Project, tmp_path: Path, stage: str
) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    head = project.picture().head
    _killed_at(project, stage, entry.id, tmp_path)
    assert (project.root / ".harness/promotion.journal.json").exists()
    again = project.promote("--approved-by", "ada", "--decision", "deferred", "--sandbox", entry.id)
    assert again.code == 0, again.stderr
    assert "finished the interrupted promotion of calc" in again.stderr
    after = project.picture()
    assert after.status == "" and after.head != head
    assert project.show("HEAD", "src/calc.py") == GOOD
    assert (project.root / "src/calc.py").read_text() == GOOD
    decisions = [d["decision"] for d in [project.record(), *project.record()["history"]]]
    assert decisions == ["deferred", "promoted"]
    assert not (project.root / ".harness/promotion.journal.json").exists()
