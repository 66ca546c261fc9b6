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
