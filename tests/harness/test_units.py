"""The pure parts: reports and selectors, the pytest report flag, dependency order, the
``status: done`` edit, required-test detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import Repo, git
from uh_core.errors import HarnessError
from uh_core.harness.done import done_text
from uh_core.harness.select import select
from uh_core.judge.testfuncs import modified_tests
from uh_core.judge.testreports import (
    ReportedCase,
    parse_report,
    selector_status,
    selects,
    with_junit_report,
)
from uh_core.layout import Layout

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="5">
  <testcase classname="tests.test_calc" name="test_add" time="0.001"/>
  <testcase classname="tests.test_calc.TestCalc" name="test_sub[1-2]"><failure message="x"/></testcase>
  <testcase classname="tests.test_calc.TestCalc" name="test_sub[3-4]"/>
  <testcase classname="tests.test_io" name="test_read"><error message="boom"/></testcase>
  <testcase classname="tests.test_io" name="test_write"><skipped message="later"/></testcase>
</testsuite></testsuites>
"""


def test_junit_cases_and_selectors(tmp_path: Path) -> None:
    path = tmp_path / "r.xml"
    path.write_text(JUNIT)
    report = parse_report(path)
    assert report.kind == "junit"
    assert [c.status for c in report.cases] == ["passed", "failed", "passed", "error", "skipped"]
    cases = report.cases
    expected = {
        "tests/test_calc.py::test_add": "passed",
        "tests.test_calc.test_add": "passed",
        "test_add": "passed",
        "tests/test_calc.py::TestCalc::test_sub[3-4]": "passed",
        "tests/test_calc.py::TestCalc::test_sub": "failed",  # every parameter must pass
        "tests/test_calc.py": "failed",
        "tests/test_io.py::test_write": "skipped",
        "tests/test_io.py::test_read": "failed",  # an error is a failure to the selector
        "tests/test_calc.py::test_ad": "not run",  # no prefix matches
        "test_missing": "not run",
    }
    assert {s: selector_status(s, cases) for s in expected} == expected
    assert not selects("calc", ReportedCase("x", "passed", "tests.test_calc.test_add"))


def test_cucumber_messages(tmp_path: Path) -> None:
    lines = [
        {
            "pickle": {
                "id": "p1",
                "name": "Adding",
                "uri": "features/calc.feature",
                "tags": [{"name": "@smoke"}],
            }
        },
        {"pickle": {"id": "p2", "name": "Dividing", "uri": "features/calc.feature", "tags": []}},
        {"testCase": {"id": "c1", "pickleId": "p1"}},
        {"testCase": {"id": "c2", "pickleId": "p2"}},
        {"testCaseStarted": {"id": "s1", "testCaseId": "c1"}},
        {"testStepFinished": {"testCaseStartedId": "s1", "testStepResult": {"status": "FAILED"}}},
        {"testCaseFinished": {"testCaseStartedId": "s1", "willBeRetried": True}},
        {"testCaseStarted": {"id": "s2", "testCaseId": "c1"}},
        {"testStepFinished": {"testCaseStartedId": "s2", "testStepResult": {"status": "PASSED"}}},
        {"testCaseStarted": {"id": "s3", "testCaseId": "c2"}},
        {"testStepFinished": {"testCaseStartedId": "s3", "testStepResult": {"status": "PASSED"}}},
        {
            "testStepFinished": {
                "testCaseStartedId": "s3",
                "testStepResult": {"status": "UNDEFINED"},
            }
        },
        {"meta": {"protocolVersion": "x"}},
    ]
    path = tmp_path / "messages.ndjson"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    report = parse_report(path)
    assert report.kind == "cucumber-messages"
    assert [(c.name, c.status) for c in report.cases] == [
        ("features/calc.feature::Adding", "passed"),  # the retried failure does not count
        ("features/calc.feature::Dividing", "error"),
    ]
    assert selector_status("@smoke", report.cases) == "passed"
    assert selector_status("Adding", report.cases) == "passed"
    assert selector_status("features/calc.feature", report.cases) == "failed"
    path.write_text("{not json\n")
    with pytest.raises(HarnessError, match=r"messages\.ndjson:1"):
        parse_report(path)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest -q", "pytest --junitxml=/r/j.xml -q"),
        ("python -m pytest", "python -m pytest --junitxml=/r/j.xml"),
        (
            "cd sub && .venv/bin/pytest -x; echo done",
            "cd sub && .venv/bin/pytest --junitxml=/r/j.xml -x; echo done",
        ),
        ("uv run pytest tests/", "uv run pytest --junitxml=/r/j.xml tests/"),
        ("make test", None),
        ("pip install pytest-cov", None),
    ],
)
def test_the_junit_report_is_added_after_pytest(command: str, expected: str | None) -> None:
    changed, added = with_junit_report(command, Path("/r/j.xml"))
    assert added is (expected is not None)
    assert changed == (expected or command)


def test_depends_on_order_and_cycles(repo: Repo) -> None:
    repo.mission("c", "id: c\ndepends_on: [b]\n")
    repo.mission("b", "id: b\ndepends_on: [a, gone]\n")
    repo.mission("a", "id: a\n")
    repo.mission("d", "id: d\nstatus: deprecated\n")
    layout = Layout(repo.root)
    assert [m.mission.id for m in select(layout).missions] == ["a", "b", "c"]
    assert [m.mission.id for m in select(layout, ("c", "a")).missions] == ["a", "c"]
    repo.mission("a", "id: a\ndepends_on: [c]\n")
    repo.mission("e", "id: e\n")
    # A cycle no longer refuses the run: its members come last (the plan blocks them).
    assert [m.mission.id for m in select(layout).missions] == ["e", "a", "b", "c"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id: m\nstatus: pending # keep\ntitle: t\n", "id: m\nstatus: done # keep\ntitle: t\n"),
        ("id: m\nstatus: 'pending'\n", "id: m\nstatus: done\n"),
        ("id: m\ntitle: t", "id: m\ntitle: t\nstatus: done\n"),
        ("{id: m, status: pending}\n", "id: m\nstatus: done\n"),
    ],
)
def test_status_done_changes_one_line(text: str, expected: str) -> None:
    assert done_text(text) == expected
    assert yaml.safe_load(done_text(text))["status"] == "done"


def test_modified_required_tests_by_content(repo: Repo) -> None:
    repo.write(
        "tests/test_x.py",
        "import pytest\n\n\ndef test_a():\n    assert 1\n\n\nclass TestB:\n    def test_c(self):\n        assert 2\n",
    )
    repo.commit("tests")
    base = git(repo.root, "rev-parse", "HEAD").strip()
    repo.write(
        "tests/test_x.py",
        "import pytest\n\n\ndef test_a():\n    assert 1\n\n\nclass TestB:\n    @pytest.mark.skip\n    def test_c(self):\n        assert 2\n\n\ndef test_new():\n    pass\n",
    )
    touched = ["tests/test_x.py"]
    found = modified_tests(
        repo.root,
        base,
        [
            "tests/test_x.py::test_a",
            "tests/test_x.py::TestB::test_c",
            "test_new",
            "tests.test_x.TestB.test_c",
        ],
        touched,
    )
    assert found == [
        ("tests/test_x.py::TestB::test_c", "tests/test_x.py::TestB::test_c"),
        ("tests.test_x.TestB.test_c", "tests/test_x.py::TestB::test_c"),
    ]
    assert modified_tests(repo.root, base, ["tests/test_x.py::test_a"], []) == []
