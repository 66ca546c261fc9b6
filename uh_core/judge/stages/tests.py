"""``tests``: the test command, with evidence of what ran.

``--test-cmd`` / ``test_cmd`` runs in the worktree with ``{mission}`` replaced by the id.
When it runs pytest, ``--junitxml=<file>`` is added after each ``pytest`` (the report lands
in this attempt's evidence folder); ``message_report:`` names a report any runner writes
(JUnit XML or Cucumber messages NDJSON). Red when the command fails or times out, when zero
tests ran, when any test failed or errored, and when a ``tests:`` selector of the mission did
not run or did not pass (skipped is not passed). Without any report the exit code alone
decides, and the evidence says so. A green exit with nothing run is the classic counterfeit.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path
from typing import Any

from uh_core.errors import UhError
from uh_core.fileio import write_bytes_atomic
from uh_core.judge import failtopass
from uh_core.judge.baseline import CODE, base_results, regressions
from uh_core.judge.context import GateContext
from uh_core.judge.room import Room, open_room
from uh_core.judge.stream import CODE as STREAM_CODE
from uh_core.judge.stream import ResultStream, disagreements, with_plugin_path
from uh_core.judge.testfuncs import modified_tests, replaced
from uh_core.judge.testreports import Report, parse_report, selector_status, with_junit_report
from uh_core.models.ledger import StageResult
from uh_core.models.proof import FailToPass
from uh_core.models.verification import Finding
from uh_core.proc import ProcResult, run_logged

TEST_TIMEOUT_S = 1800.0
REPORT_KEPT_BYTES = 32 * 1024 * 1024
_LISTED = 20


def _fingerprint(path: Path) -> tuple[int, int, str] | None:
    try:
        info = path.stat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size, digest


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def _judge_reports(
    reports: list[Report], selectors: list[str], problems: list[str], evidence: dict[str, Any]
) -> None:
    cases = [case for report in reports for case in report.cases]
    counts = {
        s: sum(1 for c in cases if c.status == s) for s in ("passed", "failed", "error", "skipped")
    }
    evidence["counts"] = {**counts, "total": len(cases)}
    if counts["passed"] + counts["failed"] + counts["error"] == 0:
        problems.append(f"zero tests ran ({len(cases)} reported, {counts['skipped']} skipped)")
    bad = [c.name for c in cases if c.status in ("failed", "error")]
    # what failed, by dotted name (JUnit classname.name): harness report's same-cause sweep
    evidence["failed_tests"] = [
        c.dotted or c.name for c in cases if c.status in ("failed", "error")
    ][:200]
    if bad:
        problems.append(f"{counts['failed']} failed, {counts['error']} errored: {_listed(bad)}")
    statuses = {selector: selector_status(selector, cases) for selector in selectors}
    evidence["selectors"] = statuses
    for selector, status in statuses.items():
        if status != "passed":
            problems.append(
                f"required test {selector} {'did not run' if status == 'not run' else status}"
            )


def _non_regression(
    ctx: GateContext,
    command: str,
    reports: list[Report],
    problems: list[str],
    notes: list[str],
    findings: list[Finding],
    evidence: dict[str, Any],
) -> None:
    """Every test that passed at the base commit still collected and passing (baseline.py)."""
    env = {"MISSION_ID": ctx.mission.id, "UH_RUN_ID": ctx.run_id}
    base = base_results(
        ctx.layout, ctx.base_commit, command, env, TEST_TIMEOUT_S,
        isolation=ctx.isolation, check_env_names=ctx.settings.check_env,
        cached=ctx.settings.base_cache,
    )  # fmt: skip
    evidence["base"] = {
        "cached": base.cached,
        "tests": len(base.cases),
        "passed": sum(1 for c in base.cases.values() if c.status == "passed"),
        "problem": base.problem,
    }
    if base.problem is not None:
        notes.append(f"suite non-regression not judged: {base.problem}")
        return
    now = [case for report in reports for case in report.cases]
    found = regressions(base.cases, now, list(ctx.mission.retire_tests))
    evidence["regressions"] = [{"test": name, "how": how} for name, how in found]
    if not found:
        return
    listed = _listed([f"{name} ({how})" for name, how in found])
    problems.append(
        f"{CODE}: {len(found)} test(s) that passed at the base commit no longer pass: {listed}"
    )
    for name, how in found:
        message = (
            f"{name} passed at the base commit and is {how} now (a mission that retires it "
            f"on purpose names it under retire_tests:)"
        )
        findings.append(Finding(severity="error", code=CODE, message=message))


def check(ctx: GateContext) -> StageResult:
    selectors = list(ctx.mission.tests)
    template = ctx.settings.test_cmd
    if template is None:
        missing = FailToPass(
            required=selectors, problem="not judged: no test command (test_cmd) is configured"
        ).model_dump(mode="json")
        if selectors:
            return StageResult(
                stage="tests",
                passed=False,
                detail="the mission names required tests but no test command is configured",
                output=f"required tests: {', '.join(selectors)}\nset test_cmd in "
                "harness.config.yaml or pass --test-cmd",
                evidence={"source": "none", "fail_to_pass": missing},
            )
        return StageResult(
            stage="tests",
            passed=True,
            detail="no test command configured: nothing to run",
            evidence={"source": "none", "fail_to_pass": missing},
        )
    with open_room(
        ctx.layout, ctx.git_dir, ctx.tree, ctx.isolation,
        label=f"tests-{ctx.mission.id}", check_env_names=ctx.settings.check_env,
        alone=ctx.settings.jobs <= 1,
    ) as room:  # fmt: skip
        result, evidence, problems, notes, findings = _run_in(ctx, room, template, selectors)
    left = room.left_running("the tests")
    if left is not None:
        problems.append(left)
        evidence["survivors"] = room.survivors[:50]
    evidence["notes"] = notes
    counts = evidence.get("counts")
    summary = (
        f"{counts['passed']} passed, {counts['failed']} failed, {counts['error']} errored, "
        f"{counts['skipped']} skipped"
        if counts
        else f"exit {result.exit_code} (no report)"
    )
    proof = evidence.get("fail_to_pass")
    shown = [FailToPass.model_validate(proof).line()] if proof else []
    output = "\n".join(
        [
            *problems,
            *notes,
            *(f.message for f in findings),
            *shown,
            f"command: {evidence['command']}",
        ]
    )
    tails = [("stdout", result.stdout_snippet), ("stderr", result.stderr_snippet)]
    output += "".join(f"\n\n{name}:\n{text.strip()}" for name, text in tails if text.strip())
    return StageResult(
        stage="tests",
        passed=not problems,
        detail=problems[0] if problems else summary,
        output=output,
        findings=findings,
        evidence=evidence,
    )


def _run_in(
    ctx: GateContext, room: Room, template: str, selectors: list[str]
) -> tuple[ProcResult, dict[str, Any], list[str], list[str], list[Finding]]:
    """The test command in ``room`` (a pristine, confined checkout of the judged tree), its
    report read and checked against the results stream."""
    junit = room.out / "junit.xml"
    command, pytest_report = with_junit_report(template.replace("{mission}", ctx.mission.id), junit)
    command = with_plugin_path(command)
    named = room.checkout / ctx.settings.message_report if ctx.settings.message_report else None
    before = _fingerprint(named) if named is not None else None
    stream = ResultStream(ctx.attempt_dir / "tests.stream.ndjson")
    base_env = {
        **room.env,
        "MISSION_ID": ctx.mission.id,
        "UH_ROOT": str(room.checkout),
        "UH_RUN_ID": ctx.run_id,
    }
    try:
        result = run_logged(
            command,
            cwd=room.checkout,
            stdout_log=ctx.attempt_dir / "tests.stdout.log",
            stderr_log=ctx.attempt_dir / "tests.stderr.log",
            env=stream.env(base_env),
            env_is_complete=True,
            timeout=TEST_TIMEOUT_S,
            launcher=room.launcher(),
            pass_fds=stream.pass_fds,
            on_start=stream.started,
        )
    finally:
        sessions = stream.finish()
    evidence: dict[str, Any] = {
        "command": command,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "stdout_log": ctx.layout.rel(result.stdout_log),
        "stderr_log": ctx.layout.rel(result.stderr_log),
        "stream_log": ctx.layout.rel(stream.log),
        "isolation": room.note(),
        "confined": room.confined,
    }
    problems: list[str] = []
    notes: list[str] = []
    if result.timed_out:
        problems.append(f"the test command timed out after {TEST_TIMEOUT_S:g} s")
    elif result.exit_code != 0:
        problems.append(f"the test command ended with exit code {result.exit_code}")
    reports: list[Report] = []
    candidates = [junit] if pytest_report else []
    if named is not None:
        after = _fingerprint(named)
        if after is not None and after != before:
            candidates.append(named)
        else:
            notes.append(
                f"message_report {ctx.settings.message_report} was not written by this run"
            )
    for path in candidates:
        if not path.is_file():
            notes.append(f"no report at {path.name}")
            continue
        try:
            reports.append(parse_report(path))
        except UhError as exc:
            problems.append(f"unreadable report {path.name}: {exc.one_line()}")
            continue
        _keep(path, ctx.attempt_dir)
    evidence["reports"] = [{"kind": r.kind, "path": r.path.name} for r in reports]
    findings: list[Finding] = []
    if reports:
        evidence["source"] = "report"
        _judge_reports(reports, selectors, problems, evidence)
        base_command = template.replace("{mission}", ctx.mission.id)
        if ctx.settings.non_regression:
            _non_regression(ctx, base_command, reports, problems, notes, findings, evidence)
        failtopass.judge(ctx, base_command, reports, problems, notes, findings, evidence)
    else:
        evidence["source"] = "exit-code"
        notes.append("no test report: the exit code alone decided")
        unknown = FailToPass(required=selectors, problem="not judged: the tests wrote no report")
        evidence["fail_to_pass"] = unknown.model_dump(mode="json")
        if selectors:
            problems.append(
                "required tests cannot be checked without a report "
                f"({', '.join(selectors)}): run pytest, or set message_report"
            )
    junit_counts = evidence.get("counts") if pytest_report and junit.is_file() else None
    for problem in disagreements(sessions, junit_counts, result.exit_code):
        problems.insert(0, f"{STREAM_CODE}: {problem}")
        findings.append(Finding(severity="error", code=STREAM_CODE, message=problem))
    evidence["stream"] = [{**s.counts(), "status": s.status} for s in sessions][-5:]
    modified = modified_tests(
        room.checkout, ctx.base_commit, selectors, ctx.touched, ctx.layout.root
    )
    for selector, where in modified:
        if replaced(room.checkout, ctx.base_commit, where, ctx.layout.root):
            message = (
                f"the agent rebound {where}, which the required test {selector} names, to "
                "something that is not the test: what Python runs is no longer the test"
            )
            findings.append(
                Finding(severity="error", code="required_test_replaced", message=message)
            )
            problems.append(f"required_test_replaced: {where}")
            continue
        severity = "error" if ctx.settings.strict_tests else "warning"
        message = f"the agent changed {where}, which the required test {selector} names"
        findings.append(Finding(severity=severity, code="required_test_modified", message=message))
        if ctx.settings.strict_tests:
            problems.append(f"required_test_modified: {where} (--strict-tests)")
    return result, evidence, problems, notes, findings


def _keep(report: Path, evidence_dir: Path) -> None:
    """A copy of a report read, as evidence (its original goes with the room)."""
    with contextlib.suppress(OSError):
        data = report.read_bytes()[:REPORT_KEPT_BYTES]
        write_bytes_atomic(evidence_dir / report.name, data)
