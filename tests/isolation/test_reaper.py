"""The subreaper and ``reap_survivors`` on real processes. Each scenario runs in a helper
process (``reaper_helper.py``) because a subreaper stays one for its whole life."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.isolation.procs import kill_marked, new_marker
from uh_core.isolation import bwrap_available, children_of, is_subreaper
from uh_core.isolation.survivors import LISTED_MAX, Survivor, Survivors

HELPER = Path(__file__).with_name("reaper_helper.py")
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="subreapers and /proc are Linux only"
)


def _scenario(name: str, markers: list[str], **env: str) -> dict[str, Any]:
    try:
        done = subprocess.run(
            [sys.executable, str(HELPER), name, *markers],
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        kill_marked(markers)  # the helper's orphans went to init if it died early
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout)
    assert seen["subreaper before"] is False
    assert seen["become"] is True and seen["become again"] is True
    assert seen["subreaper after"] is True
    return seen


def test_orphans_are_reparented_to_the_subreaper_and_reaped() -> None:
    markers = [new_marker() for _ in range(3)]
    daemon, nested, stubborn = markers
    seen = _scenario("orphans", markers)
    assert all(seen["alive before"][m] for m in markers), seen
    assert seen["daemon is our child"] and seen["stubborn is our child"], seen
    reported = {cmdline.split()[-1]: pid for pid, cmdline in seen["survivors"]}
    assert reported.keys() == {daemon, nested, stubborn}, seen
    assert reported[daemon] in seen["alive before"][daemon]
    assert all(cmdline.startswith("sleep 300.") for _, cmdline in seen["survivors"])
    assert seen["alive after"] == {m: [] for m in markers}
    assert seen["children after"] == []
    assert seen["seconds"] < 10  # the one ignoring SIGTERM is killed after the grace


def test_an_excluded_child_is_never_touched() -> None:
    markers = [new_marker() for _ in range(4)]
    seen = _scenario("exclude", markers)
    assert seen["kept running"] is True
    assert seen["kept pid"] not in [pid for pid, _ in seen["survivors"]]
    assert seen["alive after"][markers[3]] == [seen["kept pid"]]
    assert seen["children after"] == [seen["kept pid"]]
    assert all(not seen["alive after"][m] for m in markers[:3]), seen
    assert len(seen["survivors"]) == 3


def test_nothing_to_reap_is_quick() -> None:
    seen = _scenario("nothing", [])
    assert seen["survivors"] == []
    assert seen["seconds"] < 1


def test_bwrap_teardown_is_not_reported_as_a_survivor(tmp_path: Path) -> None:
    ok, reason = bwrap_available()
    if not ok:
        pytest.skip(f"bubblewrap unavailable here: {reason}")
    markers = [new_marker() for _ in range(10)]
    seen = _scenario("bwrap", markers, UH_ISO_WORK=str(tmp_path))
    assert seen["survivors"] == []
    assert seen["alive after"] == {m: [] for m in markers}
    assert seen["children after"] == []


def test_children_of_parses_names_with_spaces_and_parentheses(tmp_path: Path) -> None:
    sleep = shutil.which("sleep")
    assert sleep
    odd = tmp_path / "a) b (c"
    shutil.copy(sleep, odd)
    proc = subprocess.Popen([str(odd), "30"], stdin=subprocess.DEVNULL)
    try:
        assert proc.pid in children_of(os.getpid())
        with open(f"/proc/{proc.pid}/comm") as handle:
            assert handle.read().strip() == "a) b (c"
    finally:
        proc.kill()
        proc.wait()
    assert proc.pid not in children_of(os.getpid())
    assert children_of(-1) == []


def test_pytest_itself_is_not_a_subreaper() -> None:
    assert is_subreaper() is False


def test_an_honest_daemon_gets_sigterm_first(tmp_path: Path) -> None:
    marker = new_marker()
    out = tmp_path / "cleaned-up"
    seen = _scenario("polite", [marker, str(out)])
    assert seen["alive before"] is True
    assert seen["cleaned up"] == "term"  # its trap ran: SIGTERM came before anything else
    assert f"sleep {marker}" in seen["survivors"], seen
    assert seen["alive after"] == []
    assert seen["children after"] == []


def test_the_survivor_list_is_capped_but_counts_every_process() -> None:
    found = Survivors()
    for pid in range(1, LISTED_MAX + 51):
        found.add(Survivor(pid, f"daemon {pid}"), (pid, 7))
    assert len(found) == LISTED_MAX and found.unlisted == 50 and found.total == LISTED_MAX + 50
    assert [s.pid for s in found] == list(range(1, LISTED_MAX + 1))  # first seen first
    found.mark_stuck((3, 7))
    found.mark_stuck((LISTED_MAX + 10, 7))  # not listed: only counted
    found.mark_stuck((4, 8))  # pid 4, but another process (start time): untouched
    lines = found.lines()
    assert lines[0] == "pid 1: daemon 1"
    assert lines[2] == "pid 3: daemon 3 (would not die; left)"
    assert lines[3] == "pid 4: daemon 4"
    assert lines[-1] == "… and 50 more processes, stopped but not listed"
    assert len(lines) == LISTED_MAX + 1
    assert isinstance(found, list) and all(isinstance(s, Survivor) for s in found)


def test_a_short_list_has_no_count_line() -> None:
    found = Survivors()
    found.add(Survivor(10, "x"))
    assert found.lines() == ["pid 10: x"] and found.total == 1 and found.unlisted == 0
    assert Survivors().lines() == []
