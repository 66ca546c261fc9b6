"""``verify``: the mission's required checks, acceptance criteria and TDD criterion, run in
the worktree — always the mission as it stands on the base commit (the copy loaded from
the main checkout before the run), never the worktree's copy, which the agent could edit.

Only ``passed`` is green: ``blocked`` (a block criterion without a command, nothing that
can fail, an empty diff under ``tdd``) is not a pass. Evidence goes to the operator's
``.harness/sandboxes/<sbx>/missions/<id>/`` (verification.yaml, runs/, events.ndjson), never
into the sandbox.
"""

from __future__ import annotations

from uh_core.judge.context import GateContext
from uh_core.judge.room import open_room
from uh_core.models.ledger import StageResult
from uh_core.models.verification import ACResult, CheckResult, Finding, VerificationResult
from uh_core.verify.flaky import register_path
from uh_core.verify.report import render
from uh_core.verify.runner import VerifyOptions, verify_mission
from uh_core.verify.synthetic import synthetic_criteria

_TAIL = 2000  # characters of each stream of a failed command, for the next prompt


def _failures(result: VerificationResult) -> str:
    """The output of every failed check and criterion: what the agent needs to fix them."""
    items: list[CheckResult | ACResult] = [*result.checks, *result.acceptance_criteria]
    parts: list[str] = []
    for item in items:
        if item.status != "failed":
            continue
        name = item.name if isinstance(item, CheckResult) else item.id
        command = item.command if isinstance(item, CheckResult) else item.check_command
        parts.append(f"--- {name}" + (f": {command}" if command else ""))
        for label, text in (("stdout", item.stdout_snippet), ("stderr", item.stderr_snippet)):
            if text.strip():
                parts.append(f"{label}:\n{text.strip()[-_TAIL:]}")
    return "\n".join(parts)


def _survivors(result: VerificationResult, detail: str, survivors: list[str]) -> StageResult:
    """A verify whose checks left processes running is never green, whatever it says."""
    return StageResult(
        stage="verify",
        passed=False,
        detail=detail,
        output=detail,
        findings=[Finding(severity="error", code="survivors", message=detail)],
        evidence={"status": result.status, "run_id": result.run_id, "survivors": survivors[:50]},
    )


def check(ctx: GateContext) -> StageResult:
    inner = ctx.records
    with open_room(
        ctx.layout, ctx.git_dir, ctx.tree, ctx.isolation,
        label=f"verify-{ctx.mission.id}", check_env_names=ctx.settings.check_env,
        alone=ctx.settings.jobs <= 1,
    ) as room:  # fmt: skip
        options = VerifyOptions(
            workdir=room.checkout,
            synthetic=synthetic_criteria(inner, ctx.mission, patch=ctx.patch),
            judged_tree=ctx.tree,
            flaky_also=register_path(ctx.layout.harness),  # the operator's register is honoured
            launcher=room.launcher(),
            base_env=room.env,
            network_launcher=lambda: room.launcher(network=True),
            isolation=room.note(),
        )
        result = verify_mission(inner, ctx.mission, options)
    left = room.left_running("the checks")
    if left is not None:
        return _survivors(result, left, room.survivors)
    artifact = ctx.layout.rel(inner.verification_file(ctx.mission.id))
    acceptance = result.summary.acceptance
    checks = result.summary.checks
    detail = (
        f"{result.status}: acceptance {acceptance.passed}/{acceptance.total} passed, "
        f"{acceptance.block_failed} block-failed, {acceptance.blocked} blocked; "
        f"checks {checks.passed}/{checks.total} passed"
    )
    return StageResult(
        stage="verify",
        passed=result.status == "passed",
        detail=detail,
        output="\n\n".join(p for p in (render(result, artifact), _failures(result)) if p),
        findings=[f for f in result.findings if f.severity == "error"],
        evidence={
            "status": result.status,
            "run_id": result.run_id,
            "artifact": artifact,
            "summary": result.summary.model_dump(mode="json"),
            # the rerun verdict, criterion by criterion (the same ids in every round)
            "criteria": {ac.id: ac.status for ac in result.acceptance_criteria},
        },
    )
