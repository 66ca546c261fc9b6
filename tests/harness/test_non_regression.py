"""Suite non-regression: a test that passed at the base commit must still be collected and
pass after the attempt — whatever the mission's ``tests:`` selectors name. The agents here
do the work and quietly lose a test the mission never listed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.harness.conftest import TESTS, Project, failing
from uh_core.judge.baseline import cache_file
from uh_core.layout import Layout

LOSE = {
    "missing": 'write("tests/test_calc.py", TESTS.replace("def test_truth", "def helper_truth"))\n',
    "skipped": 'write("tests/test_calc.py", "import pytest\\n" + TESTS.replace("def test_truth", "@pytest.mark.skip\\ndef test_truth"))\n',
    "xfailed": 'write("tests/test_calc.py", "import pytest\\n" + TESTS.replace("def test_truth():\\n    assert True", "@pytest.mark.xfail\\ndef test_truth():\\n    assert False"))\n',
    "failed": 'write("tests/test_calc.py", TESTS.replace("assert True", "assert False"))\n',
}


def _agent(project: Project, name: str, extra: str) -> str:
    return project.agent(name, f"TESTS = {TESTS!r}\nwrite('src/calc.py', GOOD)\n{extra}")


def _tests_stage(data: dict[str, Any]) -> dict[str, Any]:
    stages = data["requirements"][0]["attempts"][-1]["stages"]
    stage: dict[str, Any] = next(s for s in stages if s["stage"] == "tests")
    return stage


@pytest.mark.parametrize("how", sorted(LOSE))
def test_an_unlisted_test_that_stops_passing_fails_the_gate(project: Project, how: str) -> None:
    result, data = project.run_json("--agent", _agent(project, f"lose-{how}", LOSE[how]))
    assert result.code == 1, data
    stage = failing(data["requirements"][0])
    assert stage["stage"] == "tests"
    assert "suite_regression" in stage["output"] and f"test_truth ({how})" in stage["output"]
    assert {"test": "tests.test_calc.test_truth", "how": how} in stage["evidence"]["regressions"]
    assert any(f["code"] == "suite_regression" for f in stage["findings"])


def test_a_test_the_mission_retires_by_id_may_go(project: Project) -> None:
    mission = (project.root / ".harness/missions/calc/mission.yaml").read_text()
    project.repo.mission("calc", mission + "retire_tests:\n  - tests/test_calc.py::test_truth\n")
    project.repo.commit("retire test_truth")
    result, data = project.run_json("--agent", _agent(project, "retire", LOSE["missing"]))
    assert result.code == 0, _tests_stage(data)
    assert _tests_stage(data)["evidence"]["regressions"] == []


@pytest.mark.cold_base
def test_the_base_results_are_run_once_per_base_and_command(project: Project) -> None:
    first, data = project.run_json("--agent", _agent(project, "honest", ""))
    assert first.code == 0
    base = _tests_stage(data)["evidence"]["base"]
    assert base == {"cached": False, "tests": 2, "passed": 1, "problem": None}
    layout = Layout(project.root)
    [cached] = list((layout.state_dir / "base-results").glob("*.json"))
    record = json.loads(cached.read_text())
    assert record["base_commit"] == data["base_commit"]
    assert record["cases"]["tests.test_calc.test_truth"]["status"] == "passed"
    assert record["cases"]["tests.test_calc.test_add"]["status"] == "failed"
    assert cached == cache_file(layout, data["base_commit"], record["command"])
    again, data = project.run_json("--agent", _agent(project, "honest2", ""), "--force")
    assert again.code == 0
    assert _tests_stage(data)["evidence"]["base"]["cached"] is True
    # the base checkout is gone; nothing was left in the repository
    assert not list((layout.state_dir / "base-runs").glob("*/checkout"))
