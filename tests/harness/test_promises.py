"""Promised but absent is a case: criteria without a command and selectors matching no test
are listed as unverified promises (blocked) in every summary; ``mission validate`` warns."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Repo
from tests.harness.conftest import Project
from uh_core.models.mission import Mission
from uh_core.verify.promises import selector_problem, unverified_promises

TESTS = "import pytest\n\nclass TestCalc:\n    def test_add(self):\n        pass\n\n\ndef test_sub():\n    pass\n"


def _root(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_calc.py").write_text(TESTS)
    return tmp_path


def test_selectors_are_looked_up_in_the_files(tmp_path: Path) -> None:
    root = _root(tmp_path)
    for found in (
        "tests/test_calc.py",
        "tests/test_calc.py::test_sub",
        "tests/test_calc.py::TestCalc::test_add",
        "tests/test_calc.py::test_sub[2-3]",
        "tests.test_calc.test_sub",
        "tests.test_calc.TestCalc.test_add",
        "test_sub",
        "@smoke",
        "features/calc.feature::Adding",
    ):
        assert selector_problem(found, root) is None, found
    assert (
        selector_problem("tests/test_gone.py::test_x", root) == "tests/test_gone.py does not exist"
    )
    assert selector_problem("tests/test_calc.py::test_mul", root) == (
        "tests/test_calc.py defines no test_mul"
    )
    assert (
        selector_problem("tests.test_calc.test_mul", root) == "tests.test_calc defines no test_mul"
    )
    assert selector_problem("test_mul", root) == "no test file defines test_mul"


def test_every_unverified_promise_is_listed(tmp_path: Path) -> None:
    root = _root(tmp_path)
    mission = Mission.model_validate(
        {
            "id": "m",
            "acceptance_criteria": [
                {"id": "checked", "check_command": "true"},
                {"id": "sign-off"},
                {"id": "looks-nice", "severity": "warn"},
            ],
            "tests": ["tests/test_calc.py::test_sub", "tests/test_calc.py::test_mul"],
        }
    )
    assert unverified_promises(mission, root) == [
        "acceptance criterion sign-off (block) has no check_command: nothing checks it",
        "acceptance criterion looks-nice (warn) has no check_command: nothing checks it",
        "tests: selector tests/test_calc.py::test_mul matches no test "
        "(tests/test_calc.py defines no test_mul)",
    ]
    assert len(unverified_promises(mission, root, block=False)) == 2


def test_validate_warns_about_each(repo: Repo) -> None:
    repo.write("tests/test_calc.py", TESTS)
    repo.mission(
        "m",
        "id: m\nacceptance_criteria:\n  - id: a\n    check_command: 'true'\n"
        "  - id: looks-nice\n    severity: warn\n"
        "tests: [tests/test_calc.py::test_mul, tests/test_calc.py::test_sub]\n",
    )
    result = repo.uh("mission", "validate", "m")
    assert result.code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "unverified promise" in line]
    assert len(warnings) == 2
    assert "looks-nice (warn) has no check_command" in warnings[0]
    assert "tests/test_calc.py::test_mul matches no test" in warnings[1]


def test_the_harness_summary_lists_them_even_for_a_green_mission(project: Project) -> None:
    mission = project.root / ".harness/missions/calc/mission.yaml"
    mission.write_text(
        mission.read_text().replace(
            "tests:\n",
            "  - id: reviewed\n    description: a maintainer read it\n    severity: warn\ntests:\n",
        )
    )
    project.repo.commit("a warn criterion nothing checks")
    agent = project.agent("good", 'write("src/calc.py", GOOD)\n')
    result = project.run("--agent", agent)
    assert result.code == 0, result.stderr
    assert (
        "    unverified promise (blocked): acceptance criterion reviewed (warn) has no "
        "check_command: nothing checks it"
    ) in result.stdout
    report = project.repo.uh("harness", "report").stdout
    assert "Unverified promises (blocked: nothing checks them):" in report
    assert "  calc: acceptance criterion reviewed (warn) has no check_command" in report
