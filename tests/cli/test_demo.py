"""``uh-core demo``: the offline main job builds, verifies, and refuses to clobber."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _demo(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uh_core", "demo", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_demo_builds_and_verifies(tmp_path: Path) -> None:
    result = _demo(str(tmp_path / "d"), "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["missions"] == {
        "add-subtract": "passed",
        "divide": "failed",
        "changelog": "blocked",
        "mean": "failed",
    }
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tmp_path / "d", capture_output=True, text=True
    ).stdout
    assert status == ""
    again = _demo(str(tmp_path / "d"), cwd=tmp_path)
    assert again.returncode == 0 and "Look next:" in again.stdout


def test_demo_refuses_a_foreign_directory(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "precious.txt").write_text("keep me")
    result = _demo(str(target), cwd=tmp_path)
    assert result.returncode == 2
    assert "not empty and is not a uh demo" in result.stderr
    assert (target / "precious.txt").read_text() == "keep me"
