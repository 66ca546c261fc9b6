"""Every JSON file uh reads goes through the bounded loader (``uh_core.yamllimits``): the run
registrations (``mission run``'s and ``harness run``'s), run-all's ``runtime-comparison.json``,
``.harness/false-failures.jsonl``, the mission log ``--resume`` reads and a Cucumber messages
report. For each, a depth-1000 document and a file over ``UH_YAML_MAX_BYTES`` are one bounded
error line (exit 2 from the CLI), or a malformed row in the dashboard — never a traceback — and
a huge file is refused before it is read (measured in a child)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CliResult, Repo
from uh_core.errors import HarnessError, ValidationError
from uh_core.layout import Layout

DEEP = "[" * 1000 + "]" * 1000
DEEP_OBJECT = '{"a": ' * 1000 + "1" + "}" * 1000
SMALL_CAP = "4000"  # UH_YAML_MAX_BYTES for the oversize cases (the project and mission fit)
PAD = "x" * 5000  # what makes each file below larger
MISSION = """\
id: calc
title: Implement add
objective: add(a, b) returns the sum.
acceptance_criteria:
  - id: adds
    description: add(2, 3) is 5
    check_command: "true"
"""


def _registration() -> dict[str, Any]:
    return {
        "mission_id": "calc",
        "runtime": "agent",
        "sandbox_id": "sbx-calc-agent-1",
        "runner_pid": 999_999_999,
        "agent_pgid": 999_999_999,
        "started_at": "2026-01-01T00:00:00.000Z",
        "runner_start": 1,
        "padding": PAD,
    }


def _harness_registration() -> dict[str, Any]:
    return {
        "run_id": "harness-20260101T000000000Z",
        "pid": 999_999_999,
        "start_time": 1,
        "host": "elsewhere-" + PAD,
        "started_at": "2026-01-01T00:00:00.000Z",
        "missions": ["calc"],
    }


def _one_bounded_line(result: CliResult) -> str:
    assert result.code == 2, (result.code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and len(lines[0]) < 600, result.stderr
    return lines[0]


@pytest.fixture
def calc(repo: Repo) -> Repo:
    repo.mission("calc", MISSION)
    return repo


def _oversize(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UH_YAML_MAX_BYTES", SMALL_CAP)


# --- mission run's registration (.harness/missions/<id>/active/*.json) ---------------------


def _active_file(layout: Layout) -> Path:
    path = layout.mission_dir("calc") / "active" / "sbx-calc-agent-1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.parametrize("case", ["deep", "oversize"])
def test_a_mission_run_registration_over_the_caps(
    calc: Repo, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uh_core.runtime import active

    layout = Layout(calc.root)
    path = _active_file(layout)
    if case == "deep":
        path.write_text(DEEP)
        expected = "nests too deeply"
    else:
        path.write_text(json.dumps(_registration()))
        _oversize(monkeypatch)
        expected = "UH_YAML_MAX_BYTES"
    with pytest.raises(ValidationError, match=expected):
        active.active_runs(layout, "calc")
    # a signal handler asking for a cancel's reason gets the default, not an exception
    assert active.cancel_reason(layout, "calc", "default") == "default"
    line = _one_bounded_line(calc.uh("mission", "cancel", "calc"))
    assert "active/sbx-calc-agent-1.json" in line and expected in line
    frame = _dashboard(calc)
    assert "calc" in frame


def test_a_torn_or_foreign_registration_is_still_skipped(calc: Repo) -> None:
    from uh_core.runtime import active

    layout = Layout(calc.root)
    path = _active_file(layout)
    for text in ('{"mission_id": "calc"', '{"unknown": 1}', "[1, 2]", "\xff"):
        path.write_text(text, encoding="latin-1")
        assert active.active_runs(layout, "calc") == []


# --- harness run's registration (.harness/runs/active/<run-id>.json) ----------------------


def _harness_file(layout: Layout) -> Path:
    path = layout.ledgers_dir / "active" / "harness-20260101T000000000Z.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.parametrize("case", ["deep", "oversize"])
def test_a_harness_registration_over_the_caps(
    calc: Repo, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uh_core.harness import survivors
    from uh_core.runtime.active import harness_runs, read_harness

    layout = Layout(calc.root)
    path = _harness_file(layout)
    if case == "deep":
        path.write_text(DEEP_OBJECT)
        expected = "nests too deeply"
    else:
        path.write_text(json.dumps(_harness_registration()))
        _oversize(monkeypatch)
        expected = "UH_YAML_MAX_BYTES"
    with pytest.raises(ValidationError, match=expected):
        read_harness(path)
    with pytest.raises(ValidationError, match=expected):
        harness_runs(layout)
    with pytest.raises(ValidationError, match=expected):  # --resume cannot tell: it refuses
        survivors.find(layout, ["calc"])
    line = _one_bounded_line(calc.uh("harness", "cancel"))
    assert "harness-20260101T000000000Z.json" in line and expected in line
    assert "UH_YAML_MAX" in line  # names the cap and how to raise it
    _one_bounded_line(calc.uh("mission", "cancel", "calc"))
    status = calc.uh("status", "--json")
    assert status.code == 0 and "Traceback" not in status.stderr
    assert "calc" in _dashboard(calc)


# --- run-all's runtime-comparison.json --------------------------------------------------


@pytest.mark.parametrize("case", ["deep", "oversize"])
def test_a_runtime_comparison_over_the_caps_is_a_malformed_row(
    calc: Repo, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uh_core.models.comparison import read_comparison
    from uh_core.workspace.store import Store

    layout = Layout(calc.root)
    path = layout.comparison_file("calc")
    if case == "deep":
        path.write_text('{"mission_id": "calc", "status": "failed", "findings": ' + DEEP + "}")
        expected = "nests too deeply"
    else:
        path.write_text(json.dumps({"mission_id": "calc", "status": "failed", "findings": [PAD]}))
        _oversize(monkeypatch)
        expected = "UH_YAML_MAX_BYTES"
    with pytest.raises(ValidationError, match=expected):
        read_comparison(path, layout.rel(path))
    store = Store(calc.root)
    store.full()
    mission = store.snapshot.mission("calc")
    [problem] = [p for p in mission.problems if "runtime-comparison.json" in p]
    assert problem.startswith(".harness/missions/calc/runtime-comparison.json: (document): refused")
    assert expected in problem and len(problem) < 600
    status = calc.uh("status", "--json")
    assert status.code == 0 and "Traceback" not in status.stderr
    [row] = json.loads(status.stdout)["missions"]
    assert any(expected in p for p in row["problems"])
    frame = _dashboard(calc)
    assert "calc" in frame


def test_a_comparison_that_is_not_json_or_not_a_comparison(calc: Repo) -> None:
    from uh_core.models.comparison import read_comparison

    path = Layout(calc.root).comparison_file("calc")
    path.write_text("{not json")
    with pytest.raises(ValidationError, match="not JSON"):
        read_comparison(path, "c.json")
    path.write_text('{"mission_id": "calc", "status": "sideways"}')
    with pytest.raises(ValidationError, match=r"c\.json: status: "):
        read_comparison(path, "c.json")
    path.unlink()
    with pytest.raises(FileNotFoundError):
        read_comparison(path, "c.json")


# --- .harness/false-failures.jsonl (harness report) --------------------------------------


@pytest.mark.parametrize("case", ["deep", "oversize"])
def test_false_failure_marks_over_the_caps(
    calc: Repo, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uh_core.harness.marks import marks_path, read_marks

    layout = Layout(calc.root)
    good = json.dumps({"mission_id": "calc", "reason": "flaky"})
    if case == "deep":
        bad, expected = DEEP, "line 3: the document nests too deeply"
    else:
        bad, expected = json.dumps({"mission_id": "calc", "reason": PAD}), "line 3: it is over"
        _oversize(monkeypatch)
    marks_path(layout).write_text(f"{good}\nnot json\n{bad}\n")
    with pytest.raises(ValidationError, match=expected):
        read_marks(layout)
    line = _one_bounded_line(calc.uh("harness", "report"))
    assert "false-failures.jsonl" in line and expected in line


def test_marks_skip_a_torn_line_and_keep_the_rest(calc: Repo) -> None:
    from uh_core.harness.marks import marks_path, read_marks

    layout = Layout(calc.root)
    marks_path(layout).write_text(
        '{"mission_id": "a"}\n{"mission_id": \n\n[1]\n{"mission_id": "b"}\n'
    )
    assert [m["mission_id"] for m in read_marks(layout)] == ["a", "b"]


# --- the mission log --resume reads ------------------------------------------------------


@pytest.mark.parametrize("case", ["deep", "oversize"])
def test_resume_skips_a_log_line_over_the_caps(
    calc: Repo, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uh_core.harness.resume import _events

    layout = Layout(calc.root)
    before = {"event": "harness.attempt.finished", "attempt": 1, "outcome": "fail"}
    after = {"event": "harness.attempt.finished", "attempt": 2, "outcome": "pass"}
    if case == "deep":
        bad = DEEP_OBJECT
    else:
        bad = json.dumps({"event": "x", "padding": PAD})
        _oversize(monkeypatch)
    log = layout.mission_events("calc")
    log.write_text(f"{json.dumps(before)}\n{bad}\n{json.dumps(after)}\n")
    assert _events(log) == [before, after]  # the log is shared: skipped like a torn line


# --- a Cucumber messages report (the tests stage) ----------------------------------------


@pytest.mark.parametrize("case", ["deep", "oversize"])
def test_a_cucumber_report_over_the_caps(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uh_core.judge.testreports import parse_report

    report = tmp_path / "messages.ndjson"
    first = json.dumps({"meta": {"protocolVersion": "x"}})
    if case == "deep":
        bad, expected = DEEP_OBJECT, "line 2: the document nests too deeply"
    else:
        bad, expected = json.dumps({"attachment": {"body": PAD}}), "UH_YAML_MAX_BYTES"
        _oversize(monkeypatch)
    report.write_text(f"{first}\n{bad}\n")
    with pytest.raises(HarnessError, match=expected) as caught:
        parse_report(report)
    assert len(caught.value.one_line()) < 600


# --- a huge file is refused before it is read, in a child ---------------------------------

_CHILD = """
import json, sys, time
from pathlib import Path
from uh_core.errors import UhError
from uh_core.yamllimits import YamlLimitError
{setup}
started = time.monotonic()
try:
    {call}
    outcome = "read"
except (UhError, YamlLimitError) as exc:
    outcome = exc.one_line() if isinstance(exc, UhError) else str(exc)
took = time.monotonic() - started
with open("/proc/self/status") as status:
    rss = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmHWM:"))
print(json.dumps({{"outcome": outcome, "seconds": took, "rss": rss}}))
"""

READERS: dict[str, tuple[str, str]] = {
    "mission run registration": (
        "from uh_core.runtime.active import active_runs\nfrom uh_core.layout import Layout",
        "active_runs(Layout(ROOT), 'calc')",
    ),
    "harness registration": (
        "from uh_core.runtime.active import harness_runs\nfrom uh_core.layout import Layout",
        "harness_runs(Layout(ROOT))",
    ),
    "runtime comparison": (
        "from uh_core.models.comparison import read_comparison",
        "read_comparison(ROOT / '.harness/missions/calc/runtime-comparison.json')",
    ),
    "false-failure marks": (
        "from uh_core.harness.marks import read_marks\nfrom uh_core.layout import Layout",
        "read_marks(Layout(ROOT))",
    ),
    "cucumber report": (
        "from uh_core.judge.testreports import parse_report",
        "parse_report(ROOT / 'messages.ndjson')",
    ),
}


def _huge_file(root: Path, reader: str) -> None:
    layout = Layout(root)
    path: Path = {
        "mission run registration": lambda: _active_file(layout),
        "harness registration": lambda: _harness_file(layout),
        "runtime comparison": lambda: layout.comparison_file("calc"),
        "false-failure marks": lambda: layout.harness / "false-failures.jsonl",
        "cucumber report": lambda: root / "messages.ndjson",
    }[reader]()
    with open(path, "wb") as handle:  # 1 GiB of one JSON string, sparse: nothing on disk
        handle.write(b'{"a": "')
        handle.truncate(1 << 30)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_1_gib_file_is_refused_in_a_child_under_a_second_and_100_mb(
    calc: Repo, reader: str
) -> None:
    _huge_file(calc.root, reader)
    setup, call = READERS[reader]
    code = _CHILD.format(setup=f"{setup}\nROOT = Path({str(calc.root)!r})", call=call)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "UH_YAML_MAX_BYTES" in result["outcome"] and len(result["outcome"]) < 600
    assert result["seconds"] < 1.0 and result["rss"] < 100 * 1024 * 1024, result


def _dashboard(repo: Repo) -> str:
    frame = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--root", str(repo.root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert frame.returncode == 0 and "Traceback" not in frame.stderr, frame.stderr
    return frame.stdout
