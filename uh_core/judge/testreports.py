"""Evidence of what a test command ran: JUnit XML and Cucumber messages (NDJSON) reports,
read with the standard library, and the mission's ``tests:`` selectors matched against them.

Selectors name tests the way people write them:

- pytest node ids: ``tests/test_calc.py::test_add``, ``tests/test_calc.py::TestCalc::test_add``,
  ``tests/test_calc.py::test_add[2-3]``, a whole file ``tests/test_calc.py``;
- dotted names: ``tests.test_calc.test_add``; a bare test name: ``test_add``;
- for Cucumber: a scenario name, a feature file (``features/calc.feature``), both joined with
  ``::``, or a tag (``@smoke``).

A selector passes only when at least one test it names ran and every test it names passed:
skipped is not passed, and a selector that names nothing did not run.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from uh_core.errors import HarnessError
from uh_core.safeopen import read_regular
from uh_core.shown import clip
from uh_core.yamllimits import BAD, YamlLimitError, read_json_lines

CaseStatus = Literal["passed", "failed", "error", "skipped"]
SelectorStatus = Literal["passed", "failed", "skipped", "not run"]


@dataclass(frozen=True)
class ReportedCase:
    name: str  # shown to people
    status: CaseStatus
    dotted: str | None = None  # JUnit: classname.name, for dotted and node-id selectors
    aliases: tuple[str, ...] = field(default_factory=tuple)  # exact names that select it
    xfail: bool = False  # skipped because it was expected to fail (pytest's xfail)


@dataclass
class Report:
    kind: Literal["junit", "cucumber-messages"]
    path: Path
    cases: list[ReportedCase]

    def counts(self) -> Counter[str]:
        return Counter(case.status for case in self.cases)


def parse_junit(path: Path) -> list[ReportedCase]:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise HarnessError(f"{path.name}: not a readable JUnit XML report: {exc}") from None
    cases: list[ReportedCase] = []
    for case in root.iter("testcase"):
        name = case.get("name", "")
        classname = case.get("classname", "")
        status: CaseStatus = "passed"
        tags = {child.tag: child for child in case}
        if "failure" in tags:
            status = "failed"
        elif "error" in tags:
            status = "error"
        elif "skipped" in tags:
            status = "skipped"
        xfail = status == "skipped" and tags["skipped"].get("type", "") == "pytest.xfail"
        dotted = f"{classname}.{name}" if classname else name
        aliases = [name]
        if case.get("file"):
            aliases.append(f"{case.get('file')}::{name}")
        cases.append(ReportedCase(dotted, status, dotted, tuple(aliases), xfail))
    return cases


_STEP_RANK = {"PASSED": 0, "SKIPPED": 1, "PENDING": 2, "UNDEFINED": 2, "AMBIGUOUS": 2,
              "UNKNOWN": 2, "FAILED": 3}  # fmt: skip
_BY_RANK: tuple[CaseStatus, ...] = ("passed", "skipped", "error", "failed")


def parse_cucumber_messages(path: Path) -> list[ReportedCase]:
    """Scenarios of a Cucumber messages stream: one JSON envelope a line."""
    pickles: dict[str, dict[str, Any]] = {}
    case_pickle: dict[str, str] = {}
    started: dict[str, str] = {}  # testCaseStartedId -> testCaseId
    steps: dict[str, list[str]] = {}
    retried: set[str] = set()
    try:
        # Bounded, line by line (uh_core.yamllimits): a line over the caps is refused.
        for number, envelope in read_json_lines(path):
            if envelope is BAD:
                raise HarnessError(f"{path.name}:{number}: not a Cucumber message (not JSON)")
            if "pickle" in envelope:
                pickles[envelope["pickle"]["id"]] = envelope["pickle"]
            elif "testCase" in envelope:
                case_pickle[envelope["testCase"]["id"]] = envelope["testCase"]["pickleId"]
            elif "testCaseStarted" in envelope:
                item = envelope["testCaseStarted"]
                started[item["id"]] = item["testCaseId"]
            elif "testStepFinished" in envelope:
                item = envelope["testStepFinished"]
                status = str(item.get("testStepResult", {}).get("status", "UNKNOWN"))
                steps.setdefault(item["testCaseStartedId"], []).append(status)
            elif "testCaseFinished" in envelope:
                item = envelope["testCaseFinished"]
                if item.get("willBeRetried"):
                    retried.add(item["testCaseStartedId"])
    except YamlLimitError as exc:
        raise HarnessError(f"{path.name}: refused: {exc}") from None
    except (OSError, KeyError, TypeError, AttributeError) as exc:
        raise HarnessError(
            f"{path.name}: not a readable Cucumber messages report: {clip(str(exc))}"
        ) from None
    cases: list[ReportedCase] = []
    for started_id, case_id in started.items():
        if started_id in retried:
            continue
        pickle = pickles.get(case_pickle.get(case_id, ""), {})
        name, uri = str(pickle.get("name", case_id)), str(pickle.get("uri", ""))
        tags = tuple(str(t.get("name", "")) for t in pickle.get("tags", []))
        worst = max((_STEP_RANK.get(s, 2) for s in steps.get(started_id, [])), default=1)
        shown = f"{uri}::{name}" if uri else name
        cases.append(ReportedCase(shown, _BY_RANK[worst], None, (name, uri, shown, *tags)))
    return cases


def parse_report(path: Path) -> Report:
    """A report file of either kind, told apart by its first character."""
    head = read_regular(path, 512).lstrip(b"\xef\xbb\xbf \t\r\n")  # no FIFO, no symlink
    if head.startswith(b"<"):
        return Report("junit", path, parse_junit(path))
    if head.startswith(b"{") or not head:
        return Report("cucumber-messages", path, parse_cucumber_messages(path))
    raise HarnessError(f"{path.name}: neither JUnit XML nor Cucumber messages NDJSON")


def _dotted_selector(selector: str) -> str:
    if "::" not in selector and not selector.endswith(".py"):
        return selector
    path, _, rest = selector.partition("::")
    path = path.removesuffix(".py").replace("/", ".").replace("\\", ".")
    return ".".join(part for part in (path, *rest.split("::")) if part)


def selects(selector: str, case: ReportedCase) -> bool:
    if selector in case.aliases:
        return True
    if case.dotted is None:
        return False
    wanted = re.escape(_dotted_selector(selector))
    return re.search(rf"(?:^|\.){wanted}(?:$|[.\[])", case.dotted) is not None


def selector_status(selector: str, cases: list[ReportedCase]) -> SelectorStatus:
    chosen = [case for case in cases if selects(selector, case)]
    if not chosen:
        return "not run"
    if any(case.status in ("failed", "error") for case in chosen):
        return "failed"
    if any(case.status == "skipped" for case in chosen):
        return "skipped"
    return "passed"


_PYTEST = re.compile(r"(?<![^\s/;&|(\"'])(?:py\.test|pytest)(?=$|[\s;&|)\"'])")


def with_junit_report(command: str, report: Path) -> tuple[str, bool]:
    """``command`` with ``--junitxml=<report>`` after each ``pytest`` it runs; whether any."""
    from shlex import quote

    option = f" --junitxml={quote(str(report))}"
    changed, count = _PYTEST.subn(lambda m: m.group(0) + option, command)
    return changed, count > 0
