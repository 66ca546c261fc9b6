"""Issue 30, attack 2, unconfined: a daemon left by code the run executed ignores
SIGTERM/SIGINT/SIGHUP and re-forks into a new session faster than a reaper with a round cap
goes by, then acts after the run (here: writes a file 2 s after it started).

Attacked first: with ``MAX_ROUNDS = 50`` of TERM, grace, KILL, the racing daemon outlived
``reap_survivors`` (each round killed one generation; the next was already running). Now
the reaper freezes the tree (SIGSTOP: a stopped process cannot fork) before it kills it,
with no cap on the rounds. Each scenario runs in ``tests/isolation/reaper_helper.py``:
becoming a subreaper is for life, and pytest's own process must not become one.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.isolation.procs import family, kill_family
from tests.security.respawner import HYDRA_DEPTH

HELPER = Path(__file__).resolve().parents[1] / "isolation" / "reaper_helper.py"
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="subreapers and /proc are Linux only"
)


def _respawn(mode: str, tmp_path: Path, *, in_worktree: bool = False) -> dict[str, Any]:
    marker = f"family-{secrets.token_hex(8)}"
    out = tmp_path / "acted-after-the-run"
    extra = []
    if in_worktree:
        worktree = tmp_path / "sandbox"
        worktree.mkdir()
        extra = [str(worktree)]
    try:
        done = subprocess.run(
            [sys.executable, str(HELPER), "respawn", mode, marker, str(out), *extra],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
    finally:
        kill_family([marker])  # whatever reached init if the helper died early
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout)
    assert seen["alive before"] is True, seen
    seen["marker"] = marker
    seen["out"] = out
    return seen


def _assert_none_left(seen: dict[str, Any], mode: str) -> None:
    assert seen["alive after"] == [], seen  # none left when the reaper returned
    assert seen["alive later"] == [], seen  # nor started since
    assert family(seen["marker"]) == []
    assert seen["written"] is False, seen["out"].read_text()
    assert seen["survivors"], "what was stopped is named"
    for pid, cmdline, stuck in seen["survivors"]:
        assert isinstance(pid, int) and pid > 0
        assert f"respawner.py {mode} {seen['marker']}" in cmdline, cmdline
        assert stuck is False
    pids = [pid for pid, _, _ in seen["survivors"]]
    assert len(pids) == len(set(pids))


def test_a_fork_racing_daemon_is_frozen_and_killed(tmp_path: Path) -> None:
    seen = _respawn("race", tmp_path)
    _assert_none_left(seen, "race")
    assert seen["children after"] == []


def test_a_daemon_that_sleeps_then_acts_is_killed(tmp_path: Path) -> None:
    seen = _respawn("daemon", tmp_path)
    _assert_none_left(seen, "daemon")
    # The daemon itself; under load, also one or both of the processes its double fork
    # leaves behind (the one that wrote ``.started``, the session leader between), each
    # caught frozen after its fork and before its own exit. Each carries the marker
    # (checked above); the family never has more than these three.
    assert 1 <= len(seen["survivors"]) <= 3, seen["survivors"]
    assert seen["children after"] == []


def test_a_tree_of_stubborn_daemons_is_named_whole(tmp_path: Path) -> None:
    seen = _respawn("hydra", tmp_path)
    _assert_none_left(seen, "hydra")
    assert len(seen["survivors"]) == 2**HYDRA_DEPTH - 1
    assert seen["unlisted"] == 0
    assert seen["children after"] == []


def test_the_per_mission_reaper_stops_a_fork_racer_and_spares_other_missions(
    tmp_path: Path,
) -> None:
    seen = _respawn("race", tmp_path, in_worktree=True)
    _assert_none_left(seen, "race")
    assert seen["others running"] == [True, True]  # the excluded agent, another's orphan
