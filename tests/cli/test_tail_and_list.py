"""``uh-core tail`` and ``mission list`` read what verify wrote, through the same readers."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from tests.conftest import Repo
from uh_core.events.writer import append_line


def test_list_shows_status_and_last_verdict(repo: Repo) -> None:
    repo.mission(
        "a", "id: a\ntitle: First\nacceptance_criteria:\n  - id: x\n    check_command: 'true'\n"
    )
    repo.mission("b", "id: b\nstatus: done\n")
    repo.mission("broken", "id: broken\nstatus: [\n")
    assert repo.uh("verify", "a").code == 0
    result = repo.uh("mission", "list")
    assert result.code == 0
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()[1:]}
    assert rows["a"][1:4] == ["pending", "passed", "First"]
    assert rows["b"][1:3] == ["done", "-"]
    assert rows["broken"][1] == "invalid"
    assert "mission broken:" in result.stderr
    data = json.loads(repo.uh("mission", "list", "--json").stdout)
    by_id = {m["id"]: m for m in data["missions"]}
    assert by_id["a"]["last_verdict"] == "passed" and by_id["broken"]["error"]


def test_list_counts_criteria_as_the_dashboard_does(repo: Repo) -> None:
    """Declared criteria plus the harness-made TDD one, before and after a verify; the
    dashboard's reader (``uh-core status``) shows the same rows."""
    repo.mission(
        "d",
        "id: d\nacceptance_criteria:\n  - id: x\n    check_command: 'true'\n"
        "  - id: y\n    check_command: 'true'\n"
        "tdd:\n  test_paths: ['tests/**']\n  source_paths: ['src/**']\n",
    )
    repo.mission("p", "id: p\nacceptance_criteria:\n  - id: x\n    check_command: 'true'\n")
    for verified in (False, True):
        if verified:
            repo.uh("verify", "d")
        listed = json.loads(repo.uh("mission", "list", "--json").stdout)["missions"]
        counts = {m["id"]: (m["criteria"], m["declared_criteria"]) for m in listed}
        assert counts == {"d": (3, 2), "p": (1, 1)}
        status = json.loads(repo.uh("status", "--json").stdout)["missions"]
        rows = {m["mission_id"]: [c["ac_id"] for c in m["criteria"]] for m in status}
        assert rows["d"] == ["x", "y", "ac-tdd-tests-precede-code"]


def test_tail_prints_readable_lines_and_skips_malformed(repo: Repo) -> None:
    repo.mission("a", "id: a\nacceptance_criteria:\n  - id: x\n    check_command: 'true'\n")
    repo.uh("verify", "a")
    log = repo.root / ".harness/missions/a/events.ndjson"
    append_line(log, b"not json\n")
    append_line(
        log, b'{"type": "mission.started", "ts": "2030-01-01T00:00:00Z", "mission_id": "a"}\n'
    )
    result = repo.uh("tail", "a")
    assert result.code == 0
    lines = result.stdout.splitlines()
    assert "verification.started" in lines[0]
    assert any("acceptance.checked" in line and "x: passed [block]" in line for line in lines)
    assert "mission.started" in lines[-1]
    assert "skipped 1 malformed" in result.stderr
    last_two = repo.uh("tail", "a", "-n", "2").stdout.splitlines()
    assert len(last_two) == 2


def test_tail_follow_sees_events_as_they_are_appended(repo: Repo) -> None:
    repo.mission("a", "id: a\nacceptance_criteria:\n  - id: x\n    check_command: 'sleep 0.5'\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "uh_core", "tail", "--follow", "--json", "--root", str(repo.root)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert repo.uh("verify", "a").code == 0
        seen: list[str] = []
        deadline = time.monotonic() + 15
        assert proc.stdout is not None
        while time.monotonic() < deadline and "verification.finished" not in seen:
            seen.append(json.loads(proc.stdout.readline())["event"])
        assert seen[-1] == "verification.finished"
        assert "acceptance.checked" in seen
    finally:
        proc.terminate()
        proc.wait(timeout=10)
