"""``uh-core status``: the dashboard's snapshot for scripts — text, JSON, and bad state."""

from __future__ import annotations

import json

from tests.conftest import Repo


def _two_missions(repo: Repo) -> None:
    repo.mission(
        "good",
        """
        id: good
        title: Passes
        acceptance_criteria:
          - id: ok
            check_command: "echo fine"
        """,
    )
    repo.mission(
        "bad",
        """
        id: bad
        title: Fails
        acceptance_criteria:
          - id: nope
            check_command: "echo broken >&2; exit 3"
          - id: later
            check_command: "true"
        """,
    )


def test_status_text_and_json_agree_with_verify(repo: Repo) -> None:
    _two_missions(repo)
    assert repo.uh("verify", "good").code == 0
    assert repo.uh("verify", "bad").code == 1
    text = repo.uh("status")
    assert text.code == 0, text.stderr
    lines = text.stdout.splitlines()
    assert any(line.startswith("bad") and "FAILED" in line and "1/2" in line for line in lines)
    assert any(line.startswith("good") and "PASSED" in line and "1/1" in line for line in lines)
    assert lines[-1].startswith("2 missions · 0 sandboxes")

    data = json.loads(repo.uh("status", "--json").stdout)
    bad = next(m for m in data["missions"] if m["mission_id"] == "bad")
    assert bad["verdict"] == "failed"
    nope = next(c for c in bad["criteria"] if c["ac_id"] == "nope")
    assert nope["exit_code"] == 3 and "broken" in nope["stderr"]
    assert data["root"] == str(repo.root.resolve())


def test_status_reports_bad_files_and_keeps_going(repo: Repo) -> None:
    _two_missions(repo)
    repo.write(".harness/missions/broken/mission.yaml", "id: broken\nstatus: [\n")
    log = repo.root / ".harness/missions/good/events.ndjson"
    log.write_text('{"event": "verification.started"\nnot json\n')
    result = repo.uh("status")
    assert result.code == 0, result.stderr
    assert "broken" in result.stdout and "⚠" in result.stdout
    assert "malformed event line(s) skipped" in result.stdout
    data = json.loads(repo.uh("status", "--json").stdout)
    assert data["malformed_lines"] == 2
    broken = next(m for m in data["missions"] if m["mission_id"] == "broken")
    assert broken["status"] == "invalid" and "mission.yaml" in broken["error"]


def test_status_without_harness_says_how_to_start(repo: Repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty"
    empty.mkdir()
    result = repo.uh_raw("status", "--root", str(empty))
    assert result.code == 2
    assert "uh-core init" in result.stderr and "Traceback" not in result.stderr
