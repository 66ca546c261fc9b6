"""The synthetic ``ac-tdd-tests-precede-code`` criterion, end to end through verify."""

from __future__ import annotations

import json

import yaml

from tests.conftest import Repo
from uh_core.events.reader import read_events

TDD_MISSION = """\
id: m
acceptance_criteria:
  - id: ok
    check_command: "true"
tdd:
  test_paths: ["tests/**"]
  source_paths: ["src/**"]
"""


def _setup(repo: Repo, mission: str = TDD_MISSION) -> None:
    repo.write("src/app.py", "x = 1\n")
    repo.write("tests/test_app.py", "def test_x():\n    assert True\n")
    repo.mission("m", mission)
    repo.commit("base")


def _verify(repo: Repo) -> tuple[int, dict]:
    assert repo.uh("diff", "capture", "m").code == 0
    result = repo.uh("verify", "m", "--json")
    return result.code, json.loads(result.stdout)


def _tdd(data: dict) -> dict:
    (ac,) = [a for a in data["acceptance_criteria"] if a["id"] == "ac-tdd-tests-precede-code"]
    return ac


def test_source_without_tests_fails_listing_the_source(repo: Repo) -> None:
    _setup(repo)
    repo.write("src/app.py", "x = 2\n")
    repo.write("src/new_module.py", "y = 1\n")
    code, data = _verify(repo)
    assert code == 1 and data["status"] == "failed"
    ac = _tdd(data)
    assert ac["status"] == "failed" and ac["synthetic"] is True and ac["severity"] == "block"
    assert "src/app.py" in ac["stdout_snippet"] and "src/new_module.py" in ac["stdout_snippet"]
    assert data["summary"]["acceptance"]["block_failed"] == 1
    assert any(f["code"] == "tdd_source_without_tests" for f in data["findings"])


def test_source_with_tests_passes(repo: Repo) -> None:
    _setup(repo)
    repo.write("src/app.py", "x = 2\n")
    repo.write("tests/test_app.py", "def test_x():\n    assert 2\n")
    repo.write("README.md", "changed\n")
    code, data = _verify(repo)
    assert code == 0 and data["status"] == "passed"
    assert _tdd(data)["stdout_snippet"].strip() == "tests=1 source=1 other=1"


def test_tests_only_or_other_only_passes(repo: Repo) -> None:
    _setup(repo)
    repo.write("docs/guide.md", "new\n")
    code, data = _verify(repo)
    assert code == 0 and _tdd(data)["status"] == "passed"


def test_no_diff_or_empty_diff_blocks(repo: Repo) -> None:
    _setup(repo)
    result = repo.uh("verify", "m", "--json")
    data = json.loads(result.stdout)
    assert result.code == 1 and data["status"] == "blocked"
    assert _tdd(data)["status"] == "blocked"
    assert any(f["code"] == "tdd_no_diff" for f in data["findings"])
    code, data = _verify(repo)  # captured, but nothing changed: an empty patch
    assert code == 1 and data["status"] == "blocked" and _tdd(data)["status"] == "blocked"


def test_default_globs_when_tdd_gives_none(repo: Repo) -> None:
    _setup(repo, "id: m\nacceptance_criteria:\n  - id: ok\n    check_command: 'true'\ntdd: {}\n")
    repo.write("src/app.py", "x = 3\n")
    code, data = _verify(repo)
    assert code == 1 and _tdd(data)["status"] == "failed"
    repo.write("pkg/test_app.py", "def test_y():\n    pass\n")  # **/test_*.py is a test glob
    code, data = _verify(repo)
    assert code == 0 and _tdd(data)["status"] == "passed"


def test_it_flows_through_events_like_a_declared_ac(repo: Repo) -> None:
    _setup(repo)
    repo.write("src/app.py", "x = 2\n")
    _verify(repo)
    events, _ = read_events(repo.root / ".harness/missions/m/events.ndjson")
    last_run = [e for e in events if e.run_id == events[-1].run_id]
    started = [e for e in last_run if e.event == "verification.started"]
    assert started[0].total_acceptance == 2
    checked = [e for e in last_run if e.event == "acceptance.checked"]
    assert [(e.ac_id, e.synthetic, e.status) for e in checked] == [
        ("ok", False, "passed"),
        ("ac-tdd-tests-precede-code", True, "failed"),
    ]
    assert last_run[-1].status == "failed"


def test_missions_without_tdd_or_with_it_off_are_unchanged(repo: Repo) -> None:
    _setup(repo, "id: m\nacceptance_criteria:\n  - id: ok\n    check_command: 'true'\n")
    repo.write("src/app.py", "x = 2\n")
    code, data = _verify(repo)
    assert code == 0 and [a["id"] for a in data["acceptance_criteria"]] == ["ok"]
    repo.mission("m", TDD_MISSION.replace("tdd:\n", "tdd:\n  enforce_tests_first: false\n"))
    code, data = _verify(repo)
    assert code == 0 and [a["id"] for a in data["acceptance_criteria"]] == ["ok"]


def test_human_summary_names_the_gate(repo: Repo) -> None:
    _setup(repo)
    repo.write("src/app.py", "x = 2\n")
    repo.uh("diff", "capture", "m")
    result = repo.uh("verify", "m")
    assert result.stdout.startswith("[FAIL] m\n")
    assert "failed     ac-tdd-tests-precede-code (block):" in result.stdout
    stored = yaml.safe_load((repo.root / ".harness/missions/m/verification.yaml").read_text())
    assert stored["acceptance_criteria"][-1]["synthetic"] is True
