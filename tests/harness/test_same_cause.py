"""harness report's same-cause sweep: a mission that went from red to green names the
missions still red for the same cause (stage, finding codes, failing tests' module)."""

from __future__ import annotations

import json

from tests.harness.conftest import MISSION, Project


def test_a_fix_lists_the_missions_red_for_the_same_cause(project: Project) -> None:
    project.repo.mission("twin", MISSION.replace("id: calc", "id: twin"))
    # red at tests (test_add fails), not at verify: another cause
    project.repo.mission(
        "other",
        "id: other\nacceptance_criteria:\n  - id: runs\n    check_command: 'true'\n"
        "tests:\n  - tests/test_calc.py::test_add\n",
    )
    project.repo.commit("three missions")
    before = project.snapshot()
    bad = project.agent("bad", 'write("src/calc.py", BAD)\n')
    _, first = project.run_json("--agent", bad)
    assert {r["mission_id"]: r["outcome"] for r in first["requirements"]} == {
        "calc": "blocked", "other": "blocked", "twin": "blocked",
    }  # fmt: skip
    other = next(r for r in first["requirements"] if r["mission_id"] == "other")
    tests = next(s for s in other["attempts"][0]["stages"] if s["stage"] == "tests")
    assert tests["evidence"]["failed_tests"] == ["tests.test_calc.test_add"]
    good = project.agent("good", 'write("src/calc.py", GOOD)\n')
    result, _ = project.run_json("--agent", good, "--req", "calc", "--force")
    assert result.code == 0, result.stderr
    report = json.loads(project.repo.uh("harness", "report", "--format", "json").stdout)
    [fixed] = report["same_cause"]
    assert fixed["mission_id"] == "calc"
    assert fixed["cause"] == {"stage": "verify", "codes": ["ac_failed"], "modules": []}
    assert fixed["candidates"] == ["twin"]  # other failed at tests: another cause
    text = project.repo.uh("harness", "report").stdout
    assert "  calc green in " in text and "(was red at verify [ac_failed]): twin" in text
    assert project.snapshot() == before  # a human decides: nothing is changed
