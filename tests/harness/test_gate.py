"""The gate's stages against agents that try to get a green the cheap way."""

from __future__ import annotations

import pytest

from tests.harness.conftest import TEST_CMD, Project, failing, stage_names, write_config

EDIT_AND_COMMIT = """\
mission = pathlib.Path(".harness/missions/calc/mission.yaml")
saved = pathlib.Path(__file__).with_suffix(".orig")
write("src/calc.py", GOOD)
if n == 1:
    saved.write_text(mission.read_text())
    mission.write_text(mission.read_text().replace("add(2, 3) == 5", "True"))
    subprocess.run(["git", "commit", "-qam", "loosen the judge"], check=True)
else:
    mission.write_text(saved.read_text())  # put it back, as the feedback asks
"""
SAME_SIZE_OLD_MTIME = """\
mission = pathlib.Path(".harness/missions/calc/mission.yaml")
write("src/calc.py", GOOD)
info = mission.stat()
mission.write_text(mission.read_text().replace("add(2, 3) == 5", "add(2, 3) != 7"))
os.utime(mission, ns=(info.st_atime_ns, info.st_mtime_ns))
"""


def test_an_agent_that_commits_an_edit_of_mission_yaml_is_refused(project: Project) -> None:
    before = project.snapshot()
    agent = project.agent("editor", EDIT_AND_COMMIT)
    result, data = project.run_json("--agent", agent, "--max-attempts", "2")
    assert result.code == 0, result.stderr
    assert project.snapshot() == before
    [req] = data["requirements"]
    first = req["attempts"][0]
    assert first["stage"] == "write-scope" and stage_names(req, 0) == ["agent", "write-scope"]
    scope = failing(req, 0)
    assert scope["detail"] == "agent_touched_protected_path: .harness/missions/calc/mission.yaml"
    assert [f["code"] for f in scope["findings"]] == ["agent_touched_protected_path"]
    # The offending diff goes into the next prompt; the agent restores the file and passes.
    feedback = project.prompts()[1].split("## Previous attempt failed", 1)[1]
    assert "-    check_command:" in feedback and "from src.calc import add; assert True" in feedback
    assert req["outcome"] == "pass" and len(req["attempts"]) == 2
    final = project.show("harness/calc", ".harness/missions/calc/mission.yaml")
    assert "assert add(2, 3) == 5" in final and "status: done" in final


def test_a_same_size_edit_with_its_mtime_put_back_is_still_seen(project: Project) -> None:
    before = project.snapshot()
    result, data = project.run_json("--agent", project.agent("racy", SAME_SIZE_OLD_MTIME))
    assert result.code == 1
    assert project.snapshot() == before
    [req] = data["requirements"]
    assert req["outcome"] == "blocked" and req["failing_stage"] == "write-scope"
    assert "harness/calc" in req["branch"] and req["commit"] is None


def test_an_agent_that_adds_a_feature_file_is_allowed(project: Project) -> None:
    project.repo.write("features/calc.feature", "Feature: calc\n")
    project.repo.commit("a feature")
    before = project.snapshot()
    agent = project.agent(
        "feature",
        'write("src/calc.py", GOOD)\nwrite("features/sum.feature", "Feature: sum\\n")\n',
    )
    result, _ = project.run_json("--agent", agent)
    assert result.code == 0, result.stderr
    assert project.snapshot() == before
    assert project.show("harness/calc", "features/sum.feature") == "Feature: sum\n"


def test_protected_paths_replace_the_defaults_and_allow_paths_open_exceptions(
    project: Project,
) -> None:
    project.repo.write("src/other.py", "X = 1\n")
    write_config(project.repo, 'protected_paths: ["src/**"]\nallow_paths: [src/calc.py]\n')
    project.repo.commit("scope")
    before = project.snapshot()
    agent = project.agent(
        "scope", 'write("src/calc.py", GOOD)\nwrite("src/other.py", "X = 2\\n")\n'
    )
    result, data = project.run_json("--agent", agent)
    assert result.code == 1
    assert project.snapshot() == before
    scope = failing(data["requirements"][0])
    assert scope["stage"] == "write-scope"
    assert scope["evidence"]["touched"] == [{"path": "src/other.py", "change": "modified"}]


def test_an_agent_that_deletes_the_tests_so_nothing_runs_fails(project: Project) -> None:
    # The exit code lies (`; true`); the report says nothing ran.
    project.repo.mission(
        "calc",
        project.show("HEAD", ".harness/missions/calc/mission.yaml").replace(
            "tests:\n  - tests/test_calc.py::test_add\n", ""
        ),
    )
    project.repo.commit("no required tests")
    before = project.snapshot()
    agent = project.agent(
        "deleter",
        'write("src/calc.py", GOOD)\nfor f in pathlib.Path("tests").glob("*.py"):\n    f.unlink()\n',
    )
    result, data = project.run_json("--agent", agent, "--test-cmd", f"{TEST_CMD}; true")
    assert result.code == 1
    assert project.snapshot() == before
    tests = failing(data["requirements"][0])
    assert tests["stage"] == "tests" and tests["detail"].startswith("zero tests ran")
    assert tests["evidence"]["exit_code"] == 0 and tests["evidence"]["counts"]["total"] == 0


def test_an_agent_that_marks_a_required_test_skipped_fails(project: Project) -> None:
    before = project.snapshot()
    agent = project.agent(
        "skipper",
        'write("src/calc.py", GOOD)\n'
        'tests = pathlib.Path("tests/test_calc.py")\n'
        'tests.write_text("import pytest\\n" + tests.read_text().replace('
        '"def test_add", "@pytest.mark.skip\\ndef test_add"))\n',
    )
    result, data = project.run_json("--agent", agent)
    assert result.code == 1
    assert project.snapshot() == before
    tests = failing(data["requirements"][0])
    assert tests["stage"] == "tests"
    assert tests["detail"] == "required test tests/test_calc.py::test_add skipped"
    assert tests["evidence"]["exit_code"] == 0  # pytest itself was happy
    assert tests["evidence"]["selectors"] == {"tests/test_calc.py::test_add": "skipped"}
    [finding] = tests["findings"]
    assert finding["code"] == "required_test_modified" and finding["severity"] == "warning"
    assert "tests/test_calc.py::test_add" in finding["message"]


def test_a_changed_required_test_fails_under_strict_tests(project: Project) -> None:
    agent = project.agent(
        "loosener",
        'write("src/calc.py", GOOD)\n'
        'tests = pathlib.Path("tests/test_calc.py")\n'
        'tests.write_text(tests.read_text().replace("== 5", "== 2 + 3"))\n',
    )
    result, data = project.run_json("--agent", agent, "--strict-tests")
    assert result.code == 1
    tests = failing(data["requirements"][0])
    assert (
        tests["detail"] == "required_test_modified: tests/test_calc.py::test_add (--strict-tests)"
    )
    assert tests["findings"][0]["severity"] == "error"


def test_a_source_only_change_under_tdd_fails(project: Project) -> None:
    text = project.show("HEAD", ".harness/missions/calc/mission.yaml")
    project.repo.mission("calc", text + "tdd: {}\n")
    project.repo.commit("tdd")
    before = project.snapshot()
    result, data = project.run_json("--agent", project.agent("src", 'write("src/calc.py", GOOD)\n'))
    assert result.code == 1
    assert project.snapshot() == before
    verify = failing(data["requirements"][0])
    assert verify["stage"] == "verify"
    assert "ac-tdd-tests-precede-code" in verify["output"]
    assert [f["code"] for f in verify["findings"]] == ["tdd_source_without_tests"]


@pytest.mark.parametrize("strict", [False, True])
def test_an_untouched_declared_artifact_warns_or_fails(project: Project, strict: bool) -> None:
    text = project.show("HEAD", ".harness/missions/calc/mission.yaml")
    project.repo.mission(
        "calc",
        text.replace("files: [src/calc.py]", "files: [src/calc.py, docs/calc.md, 'src/*.py']"),
    )
    project.repo.commit("artifacts")
    flags = ["--strict-artifacts"] if strict else []
    result, data = project.run_json(
        "--agent", project.agent("art", 'write("src/calc.py", GOOD)\n'), *flags
    )
    assert result.code == (1 if strict else 0)
    [req] = data["requirements"]
    artifacts = req["attempts"][0]["stages"][4]
    assert artifacts["evidence"]["declared"] == ["src/calc.py", "docs/calc.md"]
    assert artifacts["evidence"]["untouched"] == ["docs/calc.md"]
    assert artifacts["passed"] is (not strict)
    assert req["findings"][-1]["code"] == "declared_artifact_untouched"
