"""One gate for every route to a commit: ``verify --sandbox`` runs the harness gate's own
``write-scope`` and ``tests`` stages on the snapshot it judges, as two more harness-made
criteria beside the TDD one:

- ``ac-gate-write-scope``: no protected file modified or deleted, no test infrastructure
  changed that ``judge_allow`` does not permit (the same code as the harness's stage);
- ``ac-gate-tests``: the test command (``test_cmd`` in ``harness.config.yaml``) ran, the
  mission's ``tests:`` selectors ran and passed (skipped is not passed), and every test that
  passed at the base commit still passes (suite non-regression).

Without a test command the tests criterion says which evidence is missing: ``blocked``
when the mission names required tests or has no check of its own; when its own checks ran
(required checks, criteria with commands) they are its test evidence, and the criterion
and ``promote`` say that no suite was run.
A sandbox from ``mission run`` or ``run-all`` is thus judged by the same code as a
``harness/<id>`` branch before ``promote`` accepts it without ``--force``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from uh_core.errors import UhError
from uh_core.isolation.bwrap import resolve_mode
from uh_core.judge.context import GateContext
from uh_core.judge.settings import Flags, Settings, load_config, resolve
from uh_core.judge.stages import tests as tests_stage
from uh_core.judge.stages import write_scope
from uh_core.layout import Layout
from uh_core.models.ledger import StageResult
from uh_core.models.mission import Mission
from uh_core.models.proof import FailToPass
from uh_core.models.verification import ACResult, Finding
from uh_core.verify.synthetic import SyntheticCriterion

MISSING_SUITE = "no test command (test_cmd in harness.config.yaml)"
WRITE_SCOPE_ID = "ac-gate-write-scope"
TESTS_ID = "ac-gate-tests"
_DESCRIPTIONS = {
    WRITE_SCOPE_ID: "No protected file and no test infrastructure changed (write-scope).",
    TESTS_ID: "The test command's required tests pass and no test that passed at the base "
    "commit stopped passing (tests).",
}


def _result(ac_id: str, status: str, started: float, out: str, err: str = "") -> ACResult:
    return ACResult(
        id=ac_id,
        description=_DESCRIPTIONS[ac_id],
        severity="block",
        status=status,
        duration_ms=int((time.monotonic() - started) * 1000),
        stdout_snippet=out[-4000:],
        stderr_snippet=err[-2000:],
        synthetic=True,
    )


def _from_stage(
    ac_id: str, run: Callable[[], StageResult]
) -> Callable[[], tuple[ACResult, list[Finding]]]:
    def evaluate() -> tuple[ACResult, list[Finding]]:
        started = time.monotonic()
        try:
            stage = run()
        except UhError as exc:
            message = f"{ac_id}: the stage could not run: {exc.one_line()}"
            finding = Finding(severity="error", code="gate_stage_error", message=message)
            return _result(ac_id, "blocked", started, "", message), [finding]
        status = "passed" if stage.passed else "failed"
        text = f"{stage.detail}\n\n{stage.output}".strip()
        findings = [f.model_copy(update={"ac_id": ac_id}) for f in stage.findings]
        return _result(ac_id, status, started, text, "" if stage.passed else stage.detail), findings

    return evaluate


def _missing_tests(mission: Mission) -> Callable[[], tuple[ACResult, list[Finding]]]:
    def evaluate() -> tuple[ACResult, list[Finding]]:
        started = time.monotonic()
        own = mission.verification.required_checks or any(
            ac.check_command for ac in mission.acceptance_criteria
        )
        if own and not mission.tests:
            note = (
                f"{MISSING_SUITE}: the mission's own checks are its test evidence; "
                "no suite non-regression was judged"
            )
            return _result(TESTS_ID, "passed", started, note), []
        message = f"{MISSING_SUITE}: " + (
            f"the required tests {', '.join(mission.tests)} cannot be checked"
            if mission.tests
            else "the suite was not run and the mission has no required checks"
        )
        finding = Finding(severity="error", code="missing_test_evidence", message=message)
        return _result(TESTS_ID, "blocked", started, "", message), [finding]

    return evaluate


def gate_criteria(
    layout: Layout,
    records: Layout,
    mission: Mission,
    base_commit: str,
    tree: str,
    patch: Path,
    touched: list[str],
    run_id: str,
    git_dir: Path,
    settings: Settings | None = None,
    proof: list[FailToPass] | None = None,
) -> list[SyntheticCriterion]:
    """The harness gate's write-scope and tests stages as criteria of a sandbox's verify
    (``settings``: the caller's, when it has them; else read from harness.config.yaml).
    ``proof`` receives the tests stage's fail-to-pass record, when it makes one."""
    if settings is None:
        settings = resolve(layout, load_config(layout), Flags())
    evidence = records.mission_dir(mission.id) / "runs" / run_id / "gate"
    ctx = GateContext(
        layout, records, mission, settings, records.root, f"harness/{mission.id}",
        base_commit, run_id, 0, evidence, patch, touched, git_dir, tree,
        resolve_mode(settings.isolation),  # type: ignore[arg-type]
    )  # fmt: skip

    def tests() -> StageResult:
        evidence.mkdir(parents=True, exist_ok=True)
        stage = tests_stage.check(ctx)
        found = stage.evidence.get("fail_to_pass")
        if proof is not None and isinstance(found, dict):
            proof.append(FailToPass.model_validate(found))
        return stage

    criteria = [
        SyntheticCriterion(
            WRITE_SCOPE_ID,
            _DESCRIPTIONS[WRITE_SCOPE_ID],
            _from_stage(WRITE_SCOPE_ID, lambda: write_scope.check(ctx)),
        )
    ]
    run_tests = _from_stage(TESTS_ID, tests) if settings.test_cmd else _missing_tests(mission)
    criteria.append(SyntheticCriterion(TESTS_ID, _DESCRIPTIONS[TESTS_ID], run_tests))
    return criteria
