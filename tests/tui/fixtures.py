"""A fixed workspace for the dashboard's tests, written with uh_core's own models and writers.

Every timestamp, duration and id is fixed (and ``UH_FROZEN_TIME`` freezes "now"), and the
root is a fixed path, so snapshots are stable. What is in it:

- ``add-subtract``: verified, passed (three criteria with output snippets).
- ``divide``: failed verification; compared on four runtimes (alpha and beta agree,
  gamma and delta diverge) with their sandboxes, diffs and session files; ``epsilon`` is
  running on it right now.
- ``changelog``: a verification in progress (2 of 3 criteria done), and a harness run in
  progress (attempt 2, at the verify stage).
- ``legacy``: a log in the TypeScript uh's spelling (``type``/``ts``) with malformed lines.
- ``broken``: a mission.yaml that does not parse.
- three harness ledgers (pass rate over runs) and the project audit log.

``interrupt`` turns it into a workspace whose processes died: every running state's
``*.started`` event names an owner that no longer exists.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

from uh_core.events.writer import EventLog, append_line
from uh_core.fileio import write_json, write_text_atomic, write_yaml
from uh_core.init import init_project
from uh_core.layout import Layout
from uh_core.models.comparison import Comparison, DiffGroup, RuntimeRow
from uh_core.models.events import (
    AcceptanceChecked,
    AcceptanceStarted,
    BaseEvent,
    HarnessAttemptFinished,
    HarnessAttemptStarted,
    HarnessBudgetChecked,
    HarnessGateChecked,
    HarnessRequirementStarted,
    HarnessRunStarted,
    Owner,
    RuntimeCompared,
    RuntimeComparisonSummary,
    RuntimeFinished,
    RuntimeProgress,
    RuntimeStarted,
    VerificationFinished,
    VerificationStarted,
)
from uh_core.models.ledger import (
    AttemptRecord,
    HarnessLedger,
    RequirementRecord,
    RunSettings,
    Totals,
)
from uh_core.models.runtime import RuntimeChanges, RuntimeResult
from uh_core.models.sandbox import SandboxEntry, SandboxIndex
from uh_core.models.verification import (
    AcceptanceSummary,
    ACResult,
    Finding,
    Summary,
    VerificationResult,
)

FIXED_ROOT = Path("/tmp/uh-tui-fixture")
FROZEN = "2026-01-15T12:00:00.000Z"
DAY = "2026-01-15T"
BASE = "4579e4e78bfde19cfface3bcd5123c8cac3294ea"

MISSIONS = {
    "add-subtract": """schema_version: uh.mission.v0
id: add-subtract
title: Addition and subtraction work
status: done
acceptance_criteria:
  - id: unit-tests
    description: The unit tests pass.
    check_command: python3 -m unittest discover -s tests -q
  - id: importable
    description: The package imports.
    check_command: PYTHONPATH=src python3 -c 'import calc'
  - id: documented
    description: Every public function has a docstring.
    check_command: grep -c '\"\"\"' src/calc/core.py
    severity: warn
""",
    "divide": """schema_version: uh.mission.v0
id: divide
title: Division with a clear error on zero
objective: Add calc.core.divide(a, b); dividing by zero raises ZeroDivisionError.
acceptance_criteria:
  - id: divide-works
    description: divide(6, 3) is 2.
    check_command: python3 -c 'from calc.core import divide; assert divide(6, 3) == 2'
  - id: zero-message
    description: Dividing by zero raises ZeroDivisionError("cannot divide by zero").
    check_command: python3 -c 'from calc.core import divide; divide(1, 0)'
  - id: unit-tests
    description: The unit tests pass.
    check_command: python3 -m unittest discover -s tests -q
""",
    "changelog": """schema_version: uh.mission.v0
id: changelog
title: A changelog a person signs off
depends_on: [divide]
acceptance_criteria:
  - id: changelog-exists
    description: CHANGELOG.md exists.
    check_command: test -f CHANGELOG.md
  - id: names-functions
    description: The changelog names every public function.
    check_command: grep -q divide CHANGELOG.md
  - id: maintainer-review
    description: A maintainer has read the changelog.
    check_command: test -f .reviewed
    severity: warn
""",
    "legacy": """id: legacy
name: A mission written for the TypeScript uh
acceptance_criteria:
  - id: smoke
    check_command: 'true'
""",
    "broken": "id: broken\nstatus: [\n",
}

PATCH_AGREE = """diff --git a/src/calc/__init__.py b/src/calc/__init__.py
index 1111111..2222222 100644
--- a/src/calc/__init__.py
+++ b/src/calc/__init__.py
@@ -1,3 +1,3 @@
-from calc.core import add, subtract
+from calc.core import add, divide, subtract

-__all__ = ["add", "subtract"]
+__all__ = ["add", "divide", "subtract"]
diff --git a/src/calc/core.py b/src/calc/core.py
index 3333333..4444444 100644
--- a/src/calc/core.py
+++ b/src/calc/core.py
@@ -9,3 +9,10 @@ def subtract(a: float, b: float) -> float:
 def subtract(a: float, b: float) -> float:
     \"\"\"Return a - b.\"\"\"
     return a - b
+
+
+def divide(a: float, b: float) -> float:
+    \"\"\"Return a / b; dividing by zero raises ZeroDivisionError.\"\"\"
+    if b == 0:
+        raise ZeroDivisionError("cannot divide by zero")
+    return a / b
diff --git a/tests/test_divide.py b/tests/test_divide.py
new file mode 100644
index 0000000..5555555
--- /dev/null
+++ b/tests/test_divide.py
@@ -0,0 +1,8 @@
+import unittest
+
+from calc.core import divide
+
+
+class DivideTest(unittest.TestCase):
+    def test_divide(self) -> None:
+        self.assertEqual(divide(6, 3), 2)
"""

PATCH_OTHER = PATCH_AGREE.replace(
    '+    if b == 0:\n+        raise ZeroDivisionError("cannot divide by zero")\n+    return a / b\n',
    '+    try:\n+        return a / b\n+    except ZeroDivisionError:\n+        raise ZeroDivisionError("cannot divide by zero") from None\n',
).replace("@@ -9,3 +9,10 @@", "@@ -9,3 +9,11 @@")

PATCH_NO_TESTS = PATCH_AGREE.split("diff --git a/tests/")[0]

RUNTIMES = {
    # runtime: (diff hash, patch, seconds into 11:50, duration ms, files)
    "alpha": ("5f6c18574b018976", PATCH_AGREE, 144, 3),
    "beta": ("5f6c18574b018976", PATCH_AGREE, 148, 3),
    "gamma": ("985cbd422d24e3f1", PATCH_OTHER, 166, 3),
    "delta": ("88706a8cb2df489d", PATCH_NO_TESTS, 188, 2),
}


def ts(clock: str) -> str:
    """``HH:MM:SS.mmm`` on the fixture's day."""
    return f"{DAY}{clock}Z"


def emit(log: EventLog, event: BaseEvent, clock: str) -> None:
    event.timestamp = ts(clock)
    log.emit(event)


def sandbox_id(runtime: str) -> str:
    return f"sbx-divide-{runtime}-20260115115000"


def build(root: Path = FIXED_ROOT) -> Layout:
    """Write the whole workspace at ``root`` (removed first)."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    previous = os.environ.get("UH_FROZEN_TIME")
    os.environ["UH_FROZEN_TIME"] = ts("11:00:00.000")
    try:
        layout = Layout(root)
        init_project(layout)
    finally:
        if previous is None:
            os.environ.pop("UH_FROZEN_TIME", None)
        else:
            os.environ["UH_FROZEN_TIME"] = previous
    for mission_id, text in MISSIONS.items():
        write_text_atomic(layout.mission_file(mission_id), text)
    _add_subtract(layout)
    _divide(layout)
    _changelog(layout)
    _legacy(layout)
    _ledgers(layout)
    return layout


def clone(template: Path, root: Path) -> None:
    """Write at ``root`` (removed first) the workspace ``build(root)`` writes, by copying the
    one built at ``template``: the files naming the workspace's root name ``root`` instead.
    A copy takes milliseconds where a build takes a third of a second (test_fixture_copy.py
    checks the two are the same, file for file)."""
    shutil.rmtree(root, ignore_errors=True)
    root.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(template, root, symlinks=True, copy_function=shutil.copy)
    old, new = str(template).encode(), str(root).encode()
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if old in data:
                path.write_bytes(data.replace(old, new))


def _verification(
    layout: Layout, mission_id: str, run_id: str, status: str, acs: list[ACResult], at: str
) -> None:
    findings = [
        Finding(
            severity="error" if ac.severity == "block" else "warning",
            code="ac_failed",
            message=f"{ac.id} ({ac.severity}) failed: exit {ac.exit_code}",
            ac_id=ac.id,
        )
        for ac in acs
        if ac.status == "failed"
    ]
    summary = Summary(
        acceptance=AcceptanceSummary(
            passed=sum(ac.status == "passed" for ac in acs),
            block_failed=sum(ac.status == "failed" and ac.severity == "block" for ac in acs),
            warn_failed=sum(ac.status == "failed" and ac.severity == "warn" for ac in acs),
            total=len(acs),
        )
    )
    result = VerificationResult(
        mission_id=mission_id,
        run_id=run_id,
        status=status,  # type: ignore[arg-type]
        started_at=ts(at),
        finished_at=ts(at),
        root=str(layout.root),
        acceptance_criteria=acs,
        findings=findings,
        summary=summary,
    )
    write_yaml(layout.verification_file(mission_id), result.model_dump(mode="json"))


def _verify_events(
    layout: Layout,
    mission_id: str,
    run_id: str,
    acs: list[ACResult],
    start: str,
    status: str | None,
) -> None:
    log = EventLog(layout.mission_events(mission_id), mission_id=mission_id, run_id=run_id)
    hh_mm = start[:6]
    second = int(start[6:8])
    emit(log, VerificationStarted(total_acceptance=len(acs)), f"{hh_mm}{second:02d}.000")
    for index, ac in enumerate(acs):
        clock = f"{hh_mm}{second + index:02d}.100"
        emit(log, AcceptanceStarted(ac_id=ac.id, index=index, total=len(acs)), clock)
        if ac.status == "running":
            return
        emit(
            log,
            AcceptanceChecked(
                ac_id=ac.id,
                status=ac.status,
                severity=ac.severity,
                exit_code=ac.exit_code,
                duration_ms=ac.duration_ms,
            ),
            f"{hh_mm}{second + index:02d}.900",
        )
    if status:
        emit(log, VerificationFinished(status=status), f"{hh_mm}{second + len(acs):02d}.000")


def _add_subtract(layout: Layout) -> None:
    run_id = "verify-20260115T114000Z-a1b2c3"
    acs = [
        ACResult(
            id="unit-tests",
            description="The unit tests pass.",
            check_command="python3 -m unittest discover -s tests -q",
            status="passed",
            exit_code=0,
            duration_ms=143,
            stderr_snippet="..\n----------------------------------------------------------------------\n"
            "Ran 2 tests in 0.000s\n\nOK\n",
        ),
        ACResult(
            id="importable",
            description="The package imports.",
            check_command="PYTHONPATH=src python3 -c 'import calc'",
            status="passed",
            exit_code=0,
            duration_ms=86,
        ),
        ACResult(
            id="documented",
            description="Every public function has a docstring.",
            severity="warn",
            check_command='grep -c \'"""\' src/calc/core.py',
            status="passed",
            exit_code=0,
            duration_ms=7,
            stdout_snippet="3\n",
        ),
    ]
    _verify_events(layout, "add-subtract", run_id, acs, "11:40:00", "passed")
    _verification(layout, "add-subtract", run_id, "passed", acs, "11:40:03.000")


def _divide(layout: Layout) -> None:
    run_id = "verify-20260115T114500Z-d4e5f6"
    acs = [
        ACResult(
            id="divide-works",
            description="divide(6, 3) is 2.",
            check_command="python3 -c 'from calc.core import divide; assert divide(6, 3) == 2'",
            status="failed",
            exit_code=1,
            duration_ms=78,
            stderr_snippet='Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
            "ImportError: cannot import name 'divide' from 'calc.core'\n",
        ),
        ACResult(
            id="zero-message",
            description='Dividing by zero raises ZeroDivisionError("cannot divide by zero").',
            check_command="python3 -c 'from calc.core import divide; divide(1, 0)'",
            status="failed",
            exit_code=1,
            duration_ms=82,
            stderr_snippet="ImportError: cannot import name 'divide' from 'calc.core'\n",
        ),
        ACResult(
            id="unit-tests",
            description="The unit tests pass.",
            check_command="python3 -m unittest discover -s tests -q",
            status="passed",
            exit_code=0,
            duration_ms=122,
        ),
    ]
    _verify_events(layout, "divide", run_id, acs, "11:45:00", "failed")
    _verification(layout, "divide", run_id, "failed", acs, "11:45:03.000")
    entries = []
    rows = []
    for runtime, (diff_hash, patch, duration, files) in RUNTIMES.items():
        sbx = sandbox_id(runtime)
        worktree = f".harness/sandboxes/{sbx}/worktree"
        entries.append(
            SandboxEntry(
                id=sbx,
                mission_id="divide",
                runtime=runtime,
                base_commit=BASE,
                worktree=worktree,
                created_at=ts("11:50:00.000"),
            )
        )
        (layout.root / worktree).mkdir(parents=True, exist_ok=True)
        # uh's records about a sandbox live in the operator's .harness/sandboxes/<id>/
        inner = Layout(layout.root / worktree, records=layout.sandbox_evidence(sbx))
        write_text_atomic(inner.diff_file("divide"), patch)
        session = RuntimeResult(
            mission_id="divide",
            runtime=runtime,
            status="completed",
            summary=f"{runtime} added divide()",
            exit_code=0,
            started_at=ts("11:50:01.000"),
            finished_at=ts("11:50:02.000"),
            changes=RuntimeChanges(diff_ref=".harness/missions/divide/diff.patch"),
            sandbox_id=sbx,
            diff_hash=diff_hash,
        )
        write_yaml(
            inner.mission_dir("divide") / "runtime-session.yaml", session.model_dump(mode="json")
        )
        log = EventLog(layout.mission_events("divide"), mission_id="divide", run_id=sbx)
        emit(
            log, RuntimeStarted(runtime=runtime, sandbox_id=sbx, command="sh -c …"), "11:50:01.000"
        )
        emit(
            log,
            RuntimeProgress(runtime=runtime, message=f"{runtime}: writing divide()"),
            "11:50:01.500",
        )
        emit(
            log,
            RuntimeFinished(
                runtime=runtime,
                status="succeeded",
                exit_code=0,
                duration_ms=duration,
                diff_hash=diff_hash,
                files_changed=files,
            ),
            "11:50:02.000",
        )
        rows.append(
            RuntimeRow(
                runtime=runtime,
                status="succeeded",
                exit_code=0,
                duration_ms=duration,
                diff_hash=diff_hash,
                sandbox=sbx,
                touched_paths=["src/calc/__init__.py", "src/calc/core.py", "tests/test_divide.py"][
                    :files
                ],
                final_message=f"{runtime}: added divide()",
            )
        )
    comparison = Comparison(
        mission_id="divide",
        status="divergent",
        base_commit=BASE,
        created_at=ts("11:50:03.000"),
        runtimes=rows,
        groups=[
            DiffGroup(diff_hash="5f6c18574b018976", runtimes=["alpha", "beta"]),
            DiffGroup(diff_hash="88706a8cb2df489d", runtimes=["delta"]),
            DiffGroup(diff_hash="985cbd422d24e3f1", runtimes=["gamma"]),
        ],
        agreement_runtimes=["alpha", "beta"],
        divergent_runtimes=["delta", "gamma"],
    )
    log = EventLog(layout.mission_events("divide"), mission_id="divide")
    for row in rows:
        emit(
            log,
            RuntimeCompared(
                runtime=row.runtime,
                status=row.status,
                exit_code=0,
                duration_ms=row.duration_ms,
                diff_hash=row.diff_hash,
                diff_files=len(row.touched_paths),
                sandbox_id=row.sandbox,
            ),
            "11:50:03.000",
        )
    emit(
        log,
        RuntimeComparisonSummary(
            status="divergent",
            agreement_runtimes=["alpha", "beta"],
            divergent_runtimes=["delta", "gamma"],
        ),
        "11:50:03.000",
    )
    write_json(
        layout.mission_dir("divide") / "runtime-comparison.json", comparison.model_dump(mode="json")
    )
    # epsilon: running right now
    sbx = "sbx-divide-epsilon-20260115115900"
    entries.append(
        SandboxEntry(
            id=sbx,
            mission_id="divide",
            runtime="epsilon",
            base_commit=BASE,
            worktree=f".harness/sandboxes/{sbx}/worktree",
            created_at=ts("11:59:00.000"),
        )
    )
    (layout.root / f".harness/sandboxes/{sbx}/worktree").mkdir(parents=True)
    log = EventLog(layout.mission_events("divide"), mission_id="divide", run_id=sbx)
    emit(
        log, RuntimeStarted(runtime="epsilon", sandbox_id=sbx, command="epsilon …"), "11:59:00.000"
    )
    emit(log, RuntimeProgress(runtime="epsilon", message="reading the mission"), "11:59:10.000")
    emit(
        log,
        RuntimeProgress(runtime="epsilon", kind="tool_call", message="edit src/calc/core.py"),
        "11:59:40.000",
    )
    # a harness sandbox for changelog
    entries.append(
        SandboxEntry(
            id="sbx-changelog-agent-20260115115800",
            mission_id="changelog",
            runtime="agent",
            kind="harness",
            branch="harness/changelog",
            base_commit=BASE,
            worktree=".harness/sandboxes/sbx-changelog-agent-20260115115800/worktree",
            created_at=ts("11:58:00.000"),
        )
    )
    write_yaml(
        layout.sandbox_index,
        SandboxIndex(sandboxes=entries).model_dump(mode="json", exclude_none=True),
    )


def _changelog(layout: Layout) -> None:
    old_run = "verify-20260115T113000Z-000001"
    old = [
        ACResult(
            id="changelog-exists",
            status="failed",
            exit_code=1,
            duration_ms=3,
            description="CHANGELOG.md exists.",
            check_command="test -f CHANGELOG.md",
        ),
        ACResult(
            id="names-functions",
            status="failed",
            exit_code=2,
            duration_ms=4,
            description="The changelog names every public function.",
            check_command="grep -q divide CHANGELOG.md",
            stderr_snippet="grep: CHANGELOG.md: No such file or directory\n",
        ),
        ACResult(
            id="maintainer-review",
            status="failed",
            severity="warn",
            exit_code=1,
            duration_ms=2,
            description="A maintainer has read the changelog.",
            check_command="test -f .reviewed",
        ),
    ]
    _verify_events(layout, "changelog", old_run, old, "11:30:00", "failed")
    _verification(layout, "changelog", old_run, "failed", old, "11:30:03.000")
    run_id = "verify-20260115T115930Z-00000a"
    live = [
        ACResult(id="changelog-exists", status="passed", exit_code=0, duration_ms=3),
        ACResult(id="names-functions", status="passed", exit_code=0, duration_ms=5),
        ACResult(id="maintainer-review", status="unobserved", severity="warn"),
    ]
    log = EventLog(layout.mission_events("changelog"), mission_id="changelog", run_id=run_id)
    emit(log, VerificationStarted(total_acceptance=3), "11:59:30.000")
    for index, ac in enumerate(live[:2]):
        emit(log, AcceptanceStarted(ac_id=ac.id, index=index, total=3), f"11:59:3{index}.100")
        emit(
            log,
            AcceptanceChecked(
                ac_id=ac.id, status=ac.status, exit_code=0, duration_ms=ac.duration_ms
            ),
            f"11:59:3{index}.900",
        )
    emit(log, AcceptanceStarted(ac_id="maintainer-review", index=2, total=3), "11:59:32.100")
    harness_run = "harness-20260115T115800Z-0000hh"
    audit = EventLog(layout.audit_log, run_id=harness_run)
    emit(
        audit,
        HarnessRunStarted(missions=["changelog"], budget={"budget_seconds": 900, "elapsed_s": 0}),
        "11:58:00.000",
    )
    emit(
        audit,
        HarnessBudgetChecked(
            next_mission="changelog", elapsed_s=0.1, budget_seconds=900, started=0
        ),
        "11:58:00.050",
    )
    log = EventLog(layout.mission_events("changelog"), mission_id="changelog", run_id=harness_run)
    emit(log, HarnessRequirementStarted(branch="harness/changelog"), "11:58:00.100")
    emit(log, HarnessAttemptStarted(attempt=1), "11:58:00.200")
    emit(
        log,
        HarnessGateChecked(attempt=1, stage="agent", passed=True, detail="exit 0"),
        "11:58:20.000",
    )
    emit(
        log,
        HarnessGateChecked(attempt=1, stage="write-scope", passed=True, detail="ok"),
        "11:58:21.000",
    )
    emit(
        log,
        HarnessGateChecked(
            attempt=1, stage="verify", passed=False, detail="failed: 1 block-failed"
        ),
        "11:58:30.000",
    )
    emit(log, HarnessAttemptFinished(attempt=1, outcome="fail", stage="verify"), "11:58:30.100")
    emit(log, HarnessAttemptStarted(attempt=2), "11:58:31.000")
    emit(
        log,
        HarnessGateChecked(attempt=2, stage="agent", passed=True, detail="exit 0"),
        "11:59:50.000",
    )


def _legacy(layout: Layout) -> None:
    path = layout.mission_events("legacy")
    lines = [
        '{"type":"verification.started","ts":"2026-01-15T11:20:00.000Z","mission_id":"legacy","run_id":"ts-run-1","total_acceptance":1}',
        '{"type":"acceptance.checked","ts":"2026-01-15T11:20:01.000Z","mission_id":"legacy","run_id":"ts-run-1","ac_id":"smoke","status":"passed","exit_code":0,"duration_ms":12}',
        "this line is not JSON",
        '{"no_type": true}',
        '{"type":"verification.finished","ts":"2026-01-15T11:20:02.000Z","mission_id":"legacy","run_id":"ts-run-1","status":"passed"}',
        '{"type":"mission.note","ts":"2026-01-15T11:20:03.000Z","mission_id":"legacy","note":"an event type this version does not know"}',
    ]
    for line in lines:
        append_line(path, (line + "\n").encode())


def _ledger(layout: Layout, run_id: str, start: str, records: list[RequirementRecord]) -> None:
    ledger = HarnessLedger(
        run_id=run_id,
        status="completed",
        started_at=ts(start),
        finished_at=ts(start),
        root=str(layout.root),
        base_commit=BASE,
        settings=RunSettings(runtime="alpha", max_attempts=3),
        requirements=records,
        budget={
            "budget_seconds": 600,
            "elapsed_s": sum(r.duration_ms for r in records) / 1000,
            "started": len(records),
        },
    )
    outcomes = [r.outcome for r in records]
    ledger.totals = Totals(
        missions=len(records),
        passed=outcomes.count("pass"),
        failed=outcomes.count("fail"),
        skipped=outcomes.count("skipped"),
        attempts=sum(len(r.attempts) for r in records),
        duration_ms=sum(r.duration_ms for r in records),
    )
    write_json(layout.ledgers_dir / f"{run_id}.json", ledger.model_dump(mode="json"))


def _record(
    mission_id: str, outcome: str, attempts: int, stage: str | None, ms: int
) -> RequirementRecord:
    return RequirementRecord(
        mission_id=mission_id,
        outcome=outcome,  # type: ignore[arg-type]
        branch=f"harness/{mission_id}",
        failing_stage=stage if outcome == "fail" else None,
        duration_ms=ms,
        attempts=[
            AttemptRecord(
                attempt=n,
                started_at=ts("10:00:00.000"),
                outcome="pass" if outcome == "pass" and n == attempts else "fail",  # type: ignore[arg-type]
                stage=None if outcome == "pass" and n == attempts else stage,
            )
            for n in range(1, attempts + 1)
        ],
        reason=None if outcome == "pass" else f"{stage} stage failed after {attempts} attempts",
    )


def _ledgers(layout: Layout) -> None:
    _ledger(
        layout,
        "harness-20260115T100000Z-000001",
        "10:00:00.000",
        [
            _record("add-subtract", "pass", 1, None, 41_000),
            _record("divide", "fail", 3, "verify", 182_000),
        ],
    )
    _ledger(
        layout,
        "harness-20260115T103000Z-000002",
        "10:30:00.000",
        [
            _record("divide", "fail", 3, "tests", 201_000),
            _record("changelog", "skipped", 0, None, 0),
        ],
    )
    _ledger(
        layout,
        "harness-20260115T110000Z-000003",
        "11:00:00.000",
        [_record("divide", "pass", 2, "write-scope", 96_000)],
    )


# above the kernel's PID_MAX_LIMIT (2**22): no process ever has it, so its owner is gone
GONE_PID = 2**22 + 1
OWNED = ("verification.started", "runtime.started", "harness.run.started",
         "harness.requirement.started")  # fmt: skip


def interrupt(root: Path = FIXED_ROOT) -> Owner:
    """Every ``*.started`` event in the workspace's logs names an owner on this host that
    is gone, as after ``kill -9``: changelog's verify and harness run and divide's epsilon
    run read ``interrupted``, last seen at their last event."""
    owner = Owner(pid=GONE_PID, start_time=1, host=socket.gethostname())
    for log in sorted((root / ".harness").rglob("events.ndjson")):
        lines = []
        for line in log.read_text(encoding="utf-8").splitlines():
            try:
                data = json.loads(line)
            except ValueError:
                data = None
            if isinstance(data, dict) and data.get("event") in OWNED:
                data["owner"] = owner.model_dump(mode="json")
                line = json.dumps(data, separators=(",", ":"))
            lines.append(line + "\n")
        write_text_atomic(log, "".join(lines))
    return owner
