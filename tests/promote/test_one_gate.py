"""One gate for every route to a commit: a sandbox's verify judges a fresh snapshot with the
harness gate's own stages, so what promote accepts without --force passed the same rules as
a harness/<id> branch (TDD on the diff as it is now, required tests run and not skipped,
suite non-regression, the judge's files)."""

from __future__ import annotations

import sys

from tests.promote.conftest import GOOD, Project

TEST_CMD = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"
TESTS = "from src.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_truth():\n    assert True\n"


def _mission(project: Project, extra: str = "") -> None:
    mission = (project.root / ".harness/missions/calc/mission.yaml").read_text()
    project.repo.mission(
        "calc",
        mission + "tdd:\n  test_paths: ['tests/**']\n  source_paths: ['src/**']\n" + extra,
    )
    project.repo.write("harness.config.yaml", f"harness_version: 1\ntest_cmd: {TEST_CMD}\n")
    project.repo.write("tests/__init__.py", "")
    project.repo.write("tests/test_calc.py", TESTS.replace("test_add", "test_old_add", 1))
    project.repo.commit("tdd, tests and a test command")


def test_a_test_deleted_after_a_passing_verify(project: Project) -> None:
    """The stale diff: verify passes; the test goes; verify judges again and fails TDD."""
    _mission(project)
    entry = project.sandbox({"src/calc.py": GOOD, "tests/test_calc.py": TESTS})
    assert project.verify(entry).code == 0
    (project.root / entry.worktree / "tests/test_calc.py").write_text(
        TESTS.replace("test_add", "test_old_add", 1)
    )  # the new test is gone again: source-only
    again = project.verify(entry)
    assert again.code == 1
    assert "ac-tdd-tests-precede-code" in again.stdout and "no test" in again.stdout
    refused = project.promote("--approved-by", "ada", "--sandbox", entry.id)
    assert refused.code == 1 and "verification is failed" in refused.stderr


def test_a_skipped_required_test_is_not_passed_on_any_route(project: Project) -> None:
    _mission(project, "tests:\n  - tests/test_calc.py::test_add\n")
    skipped = TESTS.replace("def test_add", "import pytest\n@pytest.mark.skip\ndef test_add")
    entry = project.sandbox({"src/calc.py": GOOD, "tests/test_calc.py": skipped})
    verified = project.verify(entry)  # pytest exits 0 on a skip: the gate does not
    assert verified.code == 1 and "ac-gate-tests" in verified.stdout
    assert "required test tests/test_calc.py::test_add skipped" in verified.stdout
    refused = project.promote("--approved-by", "ada", "--sandbox", entry.id)
    assert refused.code == 1


def test_an_unlisted_test_lost_in_a_sandbox_fails_non_regression(project: Project) -> None:
    _mission(project)
    lost = TESTS.replace("def test_truth():\n    assert True\n", "")
    entry = project.sandbox({"src/calc.py": GOOD, "tests/test_calc.py": lost})
    verified = project.verify(entry)
    assert verified.code == 1 and "suite_regression" in verified.stdout
    assert "tests.test_calc.test_truth" in verified.stdout


def test_without_a_test_command_verify_says_what_is_missing(project: Project) -> None:
    project.repo.mission(
        "calc",
        (project.root / ".harness/missions/calc/mission.yaml").read_text()
        + "tests:\n  - tests/test_calc.py::test_add\n",
    )
    project.repo.commit("a required test, no test command")
    entry = project.sandbox({"src/calc.py": GOOD})
    verified = project.verify(entry)
    assert verified.code == 1 and "no test command" in verified.stdout
    refused = project.promote("--approved-by", "ada", "--sandbox", entry.id)
    assert refused.code == 1 and "verification is blocked" in refused.stderr


def test_the_honest_sandbox_passes_every_stage_and_promotes(project: Project) -> None:
    _mission(project, "tests:\n  - tests/test_calc.py::test_add\n")
    entry = project.sandbox({"src/calc.py": GOOD, "tests/test_calc.py": TESTS})
    verified = project.verify(entry)
    assert verified.code == 0, verified.stdout
    data = project.promote_json("--approved-by", "ada", "--sandbox", entry.id)
    assert data["verification_status"] == "passed" and data["forced"] is False
