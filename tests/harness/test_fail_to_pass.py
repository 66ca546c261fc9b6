"""Fail-to-pass through ``harness run`` (uh_core/judge/failtopass.py): the relevant tests run
over the base commit's source with the judged commit's tests; a required test that already
passes there proves nothing and blocks the green, unless the mission allows it."""

from __future__ import annotations

import json
from typing import Any

import yaml

from tests.conftest import git
from tests.harness.conftest import GOOD, MISSION, PY, Project, failing
from tests.runtime.helpers import add_manifest
from uh_core.layout import Layout
from uh_core.promote.review import review

NO_CHECK = MISSION.replace(  # a check that holds whatever add does: only the test judges add
    f'check_command: {PY} -c "from src.calc import add; assert add(2, 3) == 5"',
    "check_command: test -f src/calc.py",
)
SUB_TESTS = """\
from src.calc import sub


def test_sub():
    assert sub(5, 3) == 2
"""


def _proof(requirement: dict[str, Any]) -> dict[str, Any]:
    stages = requirement["attempts"][-1]["stages"]
    tests = next(s for s in stages if s["stage"] == "tests")
    proof: dict[str, Any] = tests["evidence"]["fail_to_pass"]
    return proof


def test_the_required_test_failing_at_base_is_the_evidence_and_a_trailer(project: Project) -> None:
    agent = project.agent("good", "write('src/calc.py', GOOD)\n")
    result, data = project.run_json("--agent", agent)
    assert result.code == 0, result.stderr
    [req] = data["requirements"]
    proof = _proof(req)
    assert proof["fail_to_pass"] == ["tests.test_calc.test_add"]
    assert proof["vacuous"] == [] and proof["pass_to_pass"] == []
    assert proof["test_files"] == [] and proof["cached"] is True  # the non-regression run's
    # every surface tells the same: status --json (and so MCP and the dashboard), the report
    line = "fail-to-pass 1 · pass-to-pass 0 · vacuous 0"
    status = json.loads(project.repo.uh("status", "--json").stdout)
    assert status["harness"]["requirements"][0]["fail_to_pass"] == line
    report = project.repo.uh("harness", "report")
    assert f"  calc: {line}  ({data['run_id']})" in report.stdout, report.stdout
    assert json.loads(project.repo.uh("harness", "report", "--json").stdout)["fail_to_pass"][
        "calc"
    ]["fail_to_pass"] == ["tests.test_calc.test_add"]
    # the review screen reads it from the ledger, as promote resolves the branch
    reviewed = review(Layout(project.root), "calc", branch="harness/calc")
    assert reviewed.source.verified.proof == line
    promoted = project.repo.uh(
        "promote", "calc", "--branch", "harness/calc", "--approved-by", "Ada"
    )
    assert promoted.code == 0, promoted.stderr
    body = git(project.root, "log", "-1", "--format=%B")
    assert "Uh-Fail-To-Pass: 1\n" in body and "Uh-Vacuous: 0\n" in body, body


def test_an_agent_that_weakens_the_required_test_is_blocked_as_vacuous(project: Project) -> None:
    # The counterfeit: no source change, the required test rewritten to pass anyway. Without
    # --strict-tests a changed required test is only a warning, and this mission has no check
    # of its own: before fail-to-pass this was green.
    project.repo.mission("calc", NO_CHECK)
    project.repo.commit("the mission checks nothing but its test")
    weakened = "def test_add():\n    assert True\n\n\ndef test_truth():\n    assert True\n"
    agent = project.agent("weak", f"write('tests/test_calc.py', {weakened!r})\n")
    result, data = project.run_json("--agent", agent)
    assert result.code == 1, result.stdout
    [req] = data["requirements"]
    assert req["outcome"] == "blocked" and req.get("commit") is None
    red = failing(req)
    assert red["stage"] == "tests" and red["detail"].startswith("vacuous_test:"), red
    assert "tests.test_calc.test_add" in red["detail"]
    assert _proof(req)["vacuous"] == ["tests.test_calc.test_add"]


def test_a_mission_may_allow_a_required_test_passing_at_base(project: Project) -> None:
    text = MISSION.replace(
        "  - tests/test_calc.py::test_add\n",
        "  - tests/test_calc.py::test_add\n  - tests/test_calc.py::test_truth\n",
    )
    project.repo.mission("calc", text + "allow_passing_at_base: true\n")
    project.repo.commit("test_truth stays green")
    agent = project.agent("good", "write('src/calc.py', GOOD)\n")
    result = project.run("--agent", agent)  # the summary a person reads
    assert result.code == 0, result.stderr
    assert "fail-to-pass 1 · pass-to-pass 0 · vacuous 1 (allowed" in result.stdout, result.stdout
    ledger = next(line for line in result.stdout.splitlines() if line.startswith("ledger: "))
    data = json.loads((project.root / ledger.removeprefix("ledger: ")).read_text())
    proof = _proof(data["requirements"][0])
    assert proof["fail_to_pass"] == ["tests.test_calc.test_add"]
    assert proof["vacuous"] == ["tests.test_calc.test_truth"]
    assert proof["allow_passing_at_base"] is True


def test_a_new_test_file_failing_at_base_is_evidence_and_only_the_relevant_files_run(
    project: Project,
) -> None:
    body = (
        "write('src/calc.py', GOOD + 'def sub(a, b):\\n    return a - b\\n')\n"
        f"write('tests/test_sub.py', {SUB_TESTS!r})\n"
    )
    agent = project.agent("adds-a-test", body)
    result, data = project.run_json("--agent", agent)
    assert result.code == 0, result.stderr
    [req] = data["requirements"]
    proof = _proof(req)
    # test_sub cannot even be collected on the base's source: absent before, passing now
    assert proof["fail_to_pass"] == ["tests.test_calc.test_add", "tests.test_sub.test_sub"]
    assert proof["test_files"] == ["tests/test_sub.py"] and proof["cached"] is False
    assert proof["command"].endswith(" tests/test_calc.py tests/test_sub.py")
    assert proof["tree"] != req["base_commit"]
    # the same base and the same test files again: read from the cache, not run
    again, data = project.run_json("--agent", agent, "--force")
    assert again.code == 0, again.stderr
    assert _proof(data["requirements"][0])["cached"] is True


def test_verify_sandbox_records_and_prints_the_proof(project: Project) -> None:
    script = project.agents / "fix.py"
    script.write_text(f"import pathlib\npathlib.Path('src/calc.py').write_text({GOOD!r})\n")
    add_manifest(project.repo, "fixer", f"runtime_kind: script\nconfig:\n  script: {PY} {script}\n")
    project.repo.commit("a runtime that fixes add")
    ran = project.repo.uh("mission", "run", "calc", "--runtime", "fixer", "--json")
    assert ran.code == 0, ran
    sandbox = json.loads(ran.stdout)["sandbox"]
    verified = project.repo.uh("verify", "calc", "--sandbox", sandbox)
    assert verified.code == 0, verified
    assert "fail-to-pass 1 · pass-to-pass 0 · vacuous 0" in verified.stdout, verified.stdout
    record = project.root / ".harness/sandboxes" / sandbox / "missions/calc/verification.yaml"
    saved = yaml.safe_load(record.read_text())["fail_to_pass"]
    assert saved["fail_to_pass"] == ["tests.test_calc.test_add"]
    shown = review(Layout(project.root), "calc", sandbox_id=sandbox).source.verified.proof
    assert shown == "fail-to-pass 1 · pass-to-pass 0 · vacuous 0"
