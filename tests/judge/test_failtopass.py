"""The rules of fail-to-pass without a process (uh_core/judge/failtopass.py): which tests
count, how each is classified, what command runs, and the line people read."""

from __future__ import annotations

from uh_core.judge.baseline import BaseCase, BaseRun
from uh_core.judge.failtopass import classify, selected_command
from uh_core.judge.testreports import ReportedCase
from uh_core.models.proof import FailToPass

PYTEST = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 python -m pytest -q -p no:cacheprovider"


def case(dotted: str, status: str = "passed", *, xfail: bool = False) -> ReportedCase:
    return ReportedCase(dotted, status, dotted, (dotted.rsplit(".", 1)[-1],), xfail)  # type: ignore[arg-type]


def before(**statuses: str) -> BaseRun:
    cases = {name.replace("__", "."): BaseCase(s, ()) for name, s in statuses.items()}
    return BaseRun(cases, cached=False)


def test_each_passing_relevant_test_is_classified_by_what_it_did_before() -> None:
    now = [
        case("tests.test_calc.test_add"),  # required, failed before: the evidence
        case("tests.test_calc.test_truth"),  # required, passed before: vacuous
        case("tests.test_sub.test_sub"),  # a touched file's, absent before
        case("tests.test_sub.test_old"),  # a touched file's, passed before
        case("tests.test_sub.test_skip"),  # skipped before: did not pass
        case("tests.test_other.test_x"),  # neither required nor touched: not relevant
        case("tests.test_sub.test_red", "failed"),  # not passing now: the tests stage's
        case("tests.test_sub.test_xf", "skipped", xfail=True),
    ]
    was = before(
        tests__test_calc__test_add="failed",
        tests__test_calc__test_truth="passed",
        tests__test_sub__test_old="passed",
        tests__test_sub__test_skip="skipped",
        tests__test_other__test_x="failed",
    )
    found = classify(
        now,
        was,
        ["tests/test_calc.py::test_add", "tests/test_calc.py::test_truth"],
        ["tests/test_sub.py"],
    )
    assert found.fail_to_pass == [
        "tests.test_calc.test_add",
        "tests.test_sub.test_skip",
        "tests.test_sub.test_sub",
    ]
    assert found.pass_to_pass == ["tests.test_sub.test_old"]
    assert found.vacuous == ["tests.test_calc.test_truth"]


def test_a_required_test_in_a_touched_file_is_vacuous_not_pass_to_pass() -> None:
    found = classify(
        [case("tests.test_calc.test_add")],
        before(tests__test_calc__test_add="passed"),
        ["tests.test_calc.test_add"],  # a dotted selector
        ["tests/test_calc.py"],
    )
    assert (found.vacuous, found.pass_to_pass) == (["tests.test_calc.test_add"], [])


def test_a_plain_pytest_command_is_given_the_relevant_files_only() -> None:
    line = selected_command(
        PYTEST,
        ["tests/test_calc.py::test_add", "tests/test_calc.py::TestX::test_y"],
        ["tests/test_sub.py", "tests/conftest.py", "tests/helpers.py", "pkg/thing_test.py"],
    )
    assert line == f"{PYTEST} tests/test_calc.py tests/test_sub.py pkg/thing_test.py"
    quoted = selected_command(PYTEST, [], ["tests/test_it's.py"])
    assert quoted == PYTEST + """ 'tests/test_it'"'"'s.py'"""  # one word to the shell


def test_any_other_command_runs_whole() -> None:
    changed = ["tests/test_sub.py"]
    for command in (
        f"{PYTEST} && echo done",  # a shell list: appending would go to echo
        f"cd sub; {PYTEST}",
        "make test",  # not pytest
        f"{PYTEST} $EXTRA",
    ):
        assert selected_command(command, [], changed) == command
    # a selector that names no file (dotted, or a bare name) cannot pick files
    assert selected_command(PYTEST, ["tests.test_calc.test_add"], changed) == PYTEST
    assert selected_command(PYTEST, ["test_add"], changed) == PYTEST


def test_the_line_people_read() -> None:
    proof = FailToPass(fail_to_pass=["a", "b"], pass_to_pass=["c"], vacuous=[])
    assert proof.line() == "fail-to-pass 2 · pass-to-pass 1 · vacuous 0"
    allowed = FailToPass(fail_to_pass=["a"], vacuous=["t"], allow_passing_at_base=True)
    assert allowed.line() == (
        "fail-to-pass 1 · pass-to-pass 0 · vacuous 1 (allowed: allow_passing_at_base)"
    )
    missing = FailToPass(problem="no required tests (tests:) and no test file changed")
    assert missing.line() == "fail-to-pass: no required tests (tests:) and no test file changed"
