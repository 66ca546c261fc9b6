"""A repository whose ``.harness/`` is what the TypeScript uh wrote (tests/fixtures/ts_uh)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import Repo, git

TS_UH = Path(__file__).resolve().parents[1] / "fixtures" / "ts_uh"


@pytest.fixture
def ts_repo(tmp_path: Path) -> Repo:
    root = tmp_path / "ts"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# ts\n", encoding="utf-8")
    shutil.copytree(TS_UH / "written", root / ".harness")
    git(root, "add", "README.md")
    git(root, "commit", "-q", "-m", "initial")
    return Repo(root)
