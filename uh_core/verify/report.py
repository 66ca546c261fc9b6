"""The human summary of a verification (contract §4): fixed first lines, then details."""

from __future__ import annotations

from uh_core.models.verification import ACResult, VerificationResult

_BADGE = {"passed": "PASS", "failed": "FAIL", "blocked": "BLOCKED"}


def _first_line(text: str) -> str:
    for line in reversed(text.strip().splitlines()):
        if line.strip():
            return line.strip()[:160]
    return ""


def _why(ac: ACResult) -> str:
    if ac.flaky:
        return f"flaky: {', '.join(ac.runs)}"
    if ac.status == "blocked" and ac.check_command is None and not ac.synthetic:
        return "no check_command"
    if ac.timed_out:
        return "timed out"
    parts = []
    if ac.exit_code is not None:
        parts.append(f"exit {ac.exit_code}")
    detail = _first_line(ac.stderr_snippet) or _first_line(ac.stdout_snippet)
    if detail:
        parts.append(detail)
    return ": ".join(parts) if parts else ac.status


def _synthetic(result: VerificationResult) -> str:
    """``, 2 of them uh's: ac-gate-write-scope, ac-gate-tests``: criteria uh added to the
    mission's own (the TDD rule, the gate's stages), named so the total adds up."""
    added = [ac.id for ac in result.acceptance_criteria if ac.synthetic]
    return f", {len(added)} of them uh's: {', '.join(added)}" if added else ""


def render(result: VerificationResult, artifact: str) -> str:
    checks = result.summary.checks
    acc = result.summary.acceptance
    lines = [
        f"[{_BADGE[result.status]}] {result.mission_id}",
        f"checks: {checks.passed} passed, {checks.failed} failed, {checks.blocked} blocked",
        (
            f"acceptance: {acc.passed} passed, {acc.block_failed} block-failed, "
            f"{acc.warn_failed} warn-failed, {acc.blocked} blocked (total {acc.total}"
            + _synthetic(result)
            + ")"
        ),
    ]
    for check in result.checks:
        if check.type == "command" and check.status != "passed":
            lines.append(f"  {check.status:<10} check {check.name!r}")
    for ac in result.acceptance_criteria:
        if ac.status != "passed":
            lines.append(f"  {ac.status:<10} {ac.id} ({ac.severity}): {_why(ac)}")
    for ac in result.acceptance_criteria:  # never a plain pass: the forfeited part is named
        if ac.degraded is not None:
            lines.append(
                f"  degraded   {ac.id} ({ac.status} on its substitute): {ac.degraded.gap()}"
            )
    for finding in result.findings:
        if finding.code == "nothing_can_fail":
            lines.append(f"  {finding.message}")
    if result.fail_to_pass is not None:  # verify --sandbox: do the tests test the change?
        lines.append(result.fail_to_pass.line())
    lines.append(f"artifact: {artifact}")
    return "\n".join(lines)
