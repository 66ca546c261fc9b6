"""A real project's suite, end to end: tinyver (tests/fixtures/realproject/), a small SemVer
library with a pytest suite of 76 tests, at a commit where numeric pre-release identifiers
compare as text (``1.0.0-beta.11`` sorts before ``1.0.0-beta.2``). The mission asks for the
historical fix; ``gold/`` holds it (the fixed module, the regression test, a changelog line).

Scripted agents copy from ``gold/`` (its path is the last word of their command line) and the
harness judges them with the project's own suite, run twice: at the base commit and after the
attempt. The gold patch passes and is promoted; the fix without its test fails the TDD
criterion; deleting a test the mission lists fails ``tests``; skipping an unlisted test whose
code the agent broke fails ``tests`` as a suite regression."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Repo, git
from tests.harness.conftest import PY, TEST_CMD, Project, failing, stage_names, write_config
from uh_core.init import init_project
from uh_core.layout import Layout

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "realproject"
PROJECT = FIXTURE / "project"
GOLD = FIXTURE / "gold"
MISSION_ID = "prerelease-numeric-order"
BRANCH = f"harness/{MISSION_ID}"
REGRESSION = "tests/test_version.py::TestPrecedence::test_numeric_identifiers_compare_numerically"
LISTED = "tests/test_version.py::TestPrecedence::test_spec_precedence_chain"
BASE_TESTS = 76  # every one passes at the base commit
PROJECT_TEST_CMD = f"PYTHONPATH=src {TEST_CMD}"
MISSION = f"""\
id: {MISSION_ID}
title: Numeric pre-release identifiers compare as numbers
objective: >-
  Version precedence compares numeric pre-release identifiers as text, so 1.0.0-beta.11
  sorts before 1.0.0-beta.2 and ^1.0.0-beta.2 refuses 1.0.0-beta.11. SemVer 2.0.0 item
  11.4.1 says identifiers of digits only compare numerically. Fix it in
  src/tinyver/version.py and add a regression test to TestPrecedence.
status: pending
constraints:
  - no new dependency
  - the public API (tinyver.__all__) does not change
acceptance_criteria:
  - id: beta-11-after-beta-2
    description: 1.0.0-beta.2 < 1.0.0-beta.11, and a caret range on beta.2 admits beta.11
    check_command: PYTHONPATH=src {PY} -c "from tinyver import Version, satisfies; assert Version.parse('1.0.0-beta.2') < Version.parse('1.0.0-beta.11'); assert satisfies('1.0.0-beta.11', '^1.0.0-beta.2')"
tdd:
  test_paths: ["tests/**"]
  source_paths: ["src/**"]
tests:
  - {REGRESSION}
  - {LISTED}
# LISTED passes at the base commit: required to stay green, not evidence of the fix
allow_passing_at_base: true
expected_outputs:
  files: [src/tinyver/version.py]
"""
# What the agents share: copy gold files (all of them, or some) into the sandbox, their cwd.
GOLD_HEAD = """\
import ast, shutil
GOLD = pathlib.Path(sys.argv[2])
def apply_gold(*only):
    for src in sorted(GOLD.rglob("*")):
        rel = src.relative_to(GOLD).as_posix()
        if src.is_file() and "__pycache__" not in rel and (not only or rel in only):
            pathlib.Path(rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, rel)
def edit(rel, old, new):
    path = pathlib.Path(rel)
    text = path.read_text()
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1))
"""
DELETE_LISTED = """\
apply_gold()
path = pathlib.Path("tests/test_version.py")
lines = path.read_text().splitlines(keepends=True)
[cls] = [n for n in ast.parse("".join(lines)).body if getattr(n, "name", "") == "TestPrecedence"]
[doomed] = [f for f in cls.body if getattr(f, "name", "") == "test_spec_precedence_chain"]
del lines[doomed.lineno - 1 : doomed.end_lineno + 1]
path.write_text("".join(lines))
"""
# While at it, the agent "simplifies" the caret range (^0.2.3 now admits 0.9.0) and skips the
# one test that says so.
BREAK_AND_SKIP = """\
apply_gold()
edit("src/tinyver/ranges.py", "    if major > 0 or len(parts) == 1:\\n", "    if True:\\n")
edit("tests/test_ranges.py", "def test_caret_zero_major_is_minor_locked", "@pytest.mark.skip(reason=\\"flaky\\")\\ndef test_caret_zero_major_is_minor_locked")
"""


@pytest.fixture
def tinyver(tmp_path: Path) -> Project:
    """tinyver at its buggy commit, in a git repository with ``.harness/``, the mission and
    a harness config running its suite; scripted agents live beside it."""
    root = tmp_path / "repo"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
    git(root, "init", "-q", "-b", "main")
    repo = Repo(root)
    repo.commit("tinyver 0.3.1")
    init_project(Layout(root))
    repo.mission(MISSION_ID, MISSION)
    write_config(repo, test_cmd=PROJECT_TEST_CMD)
    repo.commit("mission: numeric pre-release identifiers")
    agents = tmp_path / "agents"
    agents.mkdir()
    return Project(repo, agents)


def _run(project: Project, name: str, body: str) -> tuple[int, dict[str, Any]]:
    agent = project.agent(name, GOLD_HEAD + body)
    result, data = project.run_json("--agent", f"{agent} {GOLD}")
    [requirement] = data["requirements"]
    return result.code, requirement


def _stage(requirement: dict[str, Any], name: str) -> dict[str, Any]:
    stage: dict[str, Any] = next(
        s for s in requirement["attempts"][-1]["stages"] if s["stage"] == name
    )
    return stage


def _python(cwd: Path, code: str) -> str:
    """Run ``code`` against the tinyver checkout at ``cwd``; its stdout, stripped."""
    env = {**os.environ, "PYTHONPATH": "src", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [PY, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return proc.stdout.strip()


def test_the_fixture_is_the_buggy_commit_and_gold_fixes_it(tmp_path: Path) -> None:
    """Guards the fixture itself: gold changes the module, the test file and the changelog;
    its regression test fails on the base source and passes on the fixed one."""
    gold = sorted(p.relative_to(GOLD).as_posix() for p in GOLD.rglob("*") if p.is_file())
    assert gold == ["CHANGELOG.md", "src/tinyver/version.py", "tests/test_version.py"]
    for rel in gold:
        assert (PROJECT / rel).read_text() != (GOLD / rel).read_text()
    name = REGRESSION.rsplit("::", 1)[1]
    assert name not in (PROJECT / "tests/test_version.py").read_text()
    work = tmp_path / "tinyver"
    shutil.copytree(PROJECT, work, ignore=shutil.ignore_patterns("__pycache__", ".*_cache"))
    shutil.copyfile(GOLD / "tests/test_version.py", work / "tests/test_version.py")
    run = ["sh", "-c", f"{PROJECT_TEST_CMD} {REGRESSION}"]
    base = subprocess.run(run, cwd=work, capture_output=True, text=True)
    assert base.returncode == 1 and "1 failed" in base.stdout, base.stdout
    shutil.copyfile(GOLD / "src/tinyver/version.py", work / "src/tinyver/version.py")
    fixed = subprocess.run(run, cwd=work, capture_output=True, text=True)
    assert fixed.returncode == 0 and "1 passed" in fixed.stdout, fixed.stdout


def _dotted(node_id: str) -> str:
    return node_id.replace(".py::", "::").replace("/", ".").replace("::", ".")


def test_the_gold_patch_passes_and_is_promoted(tinyver: Project) -> None:
    before = tinyver.snapshot()
    code, req = _run(tinyver, "gold", "apply_gold()\n")
    assert code == 0, failing(req)
    assert req["outcome"] == "pass" and req["branch"] == BRANCH
    assert stage_names(req) == ["agent", "write-scope", "verify", "tests", "artifacts"]
    tests = _stage(req, "tests")
    assert tests["evidence"]["selectors"] == {REGRESSION: "passed", LISTED: "passed"}
    assert tests["evidence"]["counts"]["passed"] == BASE_TESTS + 1
    assert tests["evidence"]["base"]["tests"] == BASE_TESTS
    assert tests["evidence"]["base"]["passed"] == BASE_TESTS
    assert tests["evidence"]["regressions"] == []
    # the regression test fails on the base's source; the listed one passes there (allowed)
    proof = tests["evidence"]["fail_to_pass"]
    assert proof["fail_to_pass"] == [_dotted(REGRESSION)]
    assert proof["vacuous"] == [_dotted(LISTED)] and proof["allow_passing_at_base"] is True
    assert _dotted(LISTED) not in proof["pass_to_pass"] and len(proof["pass_to_pass"]) > 10
    assert proof["test_files"] == ["tests/test_version.py"]
    assert proof["command"].endswith(" tests/test_version.py")  # only the relevant file ran
    assert tinyver.snapshot() == before  # the main checkout is only read
    # one commit on the branch: the fix, its test, the changelog and the mission marked done
    assert git(tinyver.root, "rev-parse", BRANCH).strip() == req["commit"]
    changed = git(tinyver.root, "diff", "--name-only", f"{req['base_commit']}..{BRANCH}").split()
    assert sorted(changed) == [
        f".harness/missions/{MISSION_ID}/mission.yaml",
        "CHANGELOG.md",
        "src/tinyver/version.py",
        "tests/test_version.py",
    ]
    for rel in ("src/tinyver/version.py", "tests/test_version.py"):
        assert tinyver.show(BRANCH, rel) == (GOLD / rel).read_text()
    assert "status: done" in tinyver.show(BRANCH, f".harness/missions/{MISSION_ID}/mission.yaml")
    # a person approves: the branch lands on main as one commit
    promoted = tinyver.repo.uh("promote", MISSION_ID, "--branch", BRANCH, "--approved-by", "Ada")
    assert promoted.code == 0, promoted.stderr
    assert (tinyver.root / "src/tinyver/version.py").read_text() == (
        GOLD / "src/tinyver/version.py"
    ).read_text()
    assert "Approved-by: Ada" in git(tinyver.root, "log", "-1", "--format=%B")
    check = "from tinyver import Version as V; print(V.parse('1.0.0-beta.2') < V.parse('1.0.0-beta.11'))"
    assert _python(tinyver.root, check) == "True"


def test_the_fix_without_its_test_fails_tdd(tinyver: Project) -> None:
    code, req = _run(tinyver, "source-only", 'apply_gold("src/tinyver/version.py")\n')
    assert code == 1
    verify = failing(req)
    assert verify["stage"] == "verify"
    assert "ac-tdd-tests-precede-code" in verify["output"]
    assert [f["code"] for f in verify["findings"]] == ["tdd_source_without_tests"]
    assert "beta-11-after-beta-2" not in verify["detail"]  # the fix itself is right
    assert git(tinyver.root, "rev-parse", BRANCH).strip() == req["base_commit"]
    refused = tinyver.repo.uh("promote", MISSION_ID, "--branch", BRANCH, "--approved-by", "Ada")
    assert refused.code != 0


def test_deleting_a_listed_test_fails_tests(tinyver: Project) -> None:
    code, req = _run(tinyver, "delete-listed", DELETE_LISTED)
    assert code == 1
    tests = failing(req)
    assert tests["stage"] == "tests"
    assert f"required test {LISTED} did not run" in tests["output"]
    assert tests["evidence"]["selectors"] == {REGRESSION: "passed", LISTED: "not run"}
    assert tests["evidence"]["regressions"] == [
        {"test": "tests.test_version.TestPrecedence.test_spec_precedence_chain", "how": "missing"}
    ]
    assert tests["evidence"]["counts"]["failed"] == 0  # everything that ran passed
    codes = sorted(f["code"] for f in tests["findings"])
    assert codes == ["required_test_modified", "suite_regression"]


def test_skipping_an_unlisted_test_whose_code_broke_fails_tests(tinyver: Project) -> None:
    code, req = _run(tinyver, "break-and-skip", BREAK_AND_SKIP)
    assert code == 1
    tests = failing(req)
    assert tests["stage"] == "tests"
    skipped = "tests.test_ranges.test_caret_zero_major_is_minor_locked"
    assert "suite_regression" in tests["output"] and f"{skipped} (skipped)" in tests["output"]
    assert tests["evidence"]["regressions"] == [{"test": skipped, "how": "skipped"}]
    assert tests["evidence"]["selectors"] == {REGRESSION: "passed", LISTED: "passed"}
    counts = tests["evidence"]["counts"]
    assert (counts["failed"], counts["error"], counts["skipped"]) == (0, 0, 1)
    assert [f["code"] for f in tests["findings"]] == ["suite_regression"]
    # and the code under that test is broken indeed: ^0.2.3 admits 0.9.0 in the agent's tree
    broken = "from tinyver import satisfies; print(satisfies('0.9.0', '^0.2.3'))"
    assert _python(Path(req["worktree"]), broken) == "True"
