"""tests/tmpsweep.py: older sessions' folders leave at once and are removed in the background;
what pytest keeps (the newest sessions, a live session's locked folder) stays."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

from tests.tmpsweep import TRASH, sweep


def _config(basetemp: Path | None, current: Path, keep: int = 3) -> SimpleNamespace:
    return SimpleNamespace(
        option=SimpleNamespace(basetemp=basetemp),
        _tmp_path_factory=SimpleNamespace(getbasetemp=lambda: current),
        getini=lambda name: str(keep),
    )


def _sessions(root: Path, *numbers: int) -> None:
    for n in numbers:
        folder = root / f"pytest-{n}" / "test_x0" / "repo" / ".git"
        folder.mkdir(parents=True)
        (folder / "HEAD").write_text("ref: refs/heads/main\n")
        (folder.parent / "readonly").mkdir()
        (folder.parent / "readonly" / "f").write_text("x")
        (folder.parent / "readonly").chmod(0o500)  # pytest's rm_rf copes; so must the sweep


def _gone(path: Path, within: float = 30.0) -> bool:
    deadline = time.monotonic() + within
    while path.exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_older_sessions_are_moved_aside_then_removed_and_the_kept_ones_stay(
    tmp_path: Path,
) -> None:
    _sessions(tmp_path, 1, 2, 3, 4, 5)
    (tmp_path / "pytest-2" / ".lock").write_text("4242")  # a session that may still run
    sweep(_config(None, tmp_path / "pytest-5"))  # type: ignore[arg-type]
    assert not (tmp_path / "pytest-1").exists()  # at once: moved aside, not yet removed
    assert all(_gone(p) for p in tmp_path.glob(f"{TRASH}*"))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["pytest-2", "pytest-3", "pytest-4", "pytest-5"]


def test_an_interrupted_sweep_is_finished_by_the_next(tmp_path: Path) -> None:
    _sessions(tmp_path, 7)
    (tmp_path / f"{TRASH}left").mkdir()
    (tmp_path / f"{TRASH}left" / "f").write_text("x")
    sweep(_config(None, tmp_path / "pytest-7"))  # type: ignore[arg-type]
    assert _gone(tmp_path / f"{TRASH}left")
    assert (tmp_path / "pytest-7" / "test_x0").is_dir()


def test_a_fixed_basetemp_is_left_to_the_user(tmp_path: Path) -> None:
    _sessions(tmp_path, 1, 2, 3, 4, 5)
    sweep(_config(tmp_path / "mine", tmp_path / "pytest-5"))  # type: ignore[arg-type]
    assert len(list(tmp_path.iterdir())) == 5
