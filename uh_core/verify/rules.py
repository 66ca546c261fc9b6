"""Status rules, findings and the summary of a verification (contract §4). Pure functions."""

from __future__ import annotations

from uh_core.models.verification import (
    AcceptanceSummary,
    ACResult,
    CheckResult,
    CheckSummary,
    Finding,
    Summary,
    VerdictStatus,
)


def _reason(exit_code: int | None, timed_out: bool) -> str:
    if timed_out:
        return "timed out"
    if exit_code is None:
        return "killed by a signal"
    return f"exit {exit_code}"


def criterion_findings(ac: ACResult) -> list[Finding]:
    level = "error" if ac.severity == "block" else "warning"
    if ac.check_command is None and not ac.synthetic:
        return [
            Finding(
                severity=level,
                code="ac_without_command",
                message=f"{ac.id} ({ac.severity}) has no check_command: nothing checks it",
                ac_id=ac.id,
            )
        ]
    if ac.flaky:
        runs = ", ".join(ac.runs)
        return [
            Finding(
                severity=level,
                code="ac_flaky",
                message=f"{ac.id} changed its verdict on the same revision ({runs})",
                ac_id=ac.id,
            )
        ]
    if ac.status == "failed":
        return [
            Finding(
                severity=level,
                code="ac_failed",
                message=f"{ac.id} ({ac.severity}) failed: {_reason(ac.exit_code, ac.timed_out)}",
                ac_id=ac.id,
            )
        ]
    return []


def check_findings(check: CheckResult) -> list[Finding]:
    if check.type == "manual":
        return [
            Finding(
                severity="warning",
                code="manual_check",
                message=f"manual check not run by uh (a person confirms it): {check.name}",
            )
        ]
    if check.command is None:
        return [
            Finding(
                severity="error",
                code="check_without_command",
                message=f"required check {check.name!r} has no command: nothing checks it",
            )
        ]
    if check.flaky:
        return [
            Finding(
                severity="error",
                code="check_flaky",
                message=f"required check {check.name!r} changed its verdict on the same revision",
            )
        ]
    if check.status == "failed":
        reason = _reason(check.exit_code, check.timed_out)
        return [
            Finding(
                severity="error",
                code="check_failed",
                message=f"required check {check.name!r} failed: {reason}",
            )
        ]
    return []


def summarise(checks: list[CheckResult], criteria: list[ACResult]) -> Summary:
    required = [c for c in checks if c.type != "manual"]
    check_summary = CheckSummary(
        passed=sum(c.status == "passed" for c in required),
        failed=sum(c.status == "failed" for c in required),
        blocked=sum(c.status in ("blocked", "unobserved") for c in required),
        total=len(required),
    )
    acceptance = AcceptanceSummary(
        passed=sum(a.status == "passed" for a in criteria),
        block_failed=sum(a.status == "failed" and a.severity == "block" for a in criteria),
        warn_failed=sum(a.status == "failed" and a.severity == "warn" for a in criteria),
        blocked=sum(a.status == "blocked" for a in criteria),
        unobserved=sum(a.status == "unobserved" for a in criteria),
        total=len(criteria),
    )
    return Summary(checks=check_summary, acceptance=acceptance)


def decide(
    checks: list[CheckResult], criteria: list[ACResult]
) -> tuple[VerdictStatus, list[Finding]]:
    """The mission's status, first rule that matches, and the finding that explains a block."""
    required = [c for c in checks if c.type != "manual"]
    block = [a for a in criteria if a.severity == "block"]
    if any(c.status == "failed" for c in required) or any(a.status == "failed" for a in block):
        return "failed", []
    if any(c.status in ("blocked", "unobserved") for c in required) or any(
        a.status in ("blocked", "unobserved") for a in block
    ):
        return "blocked", []
    gating = [c for c in required if c.command] + [
        a for a in block if a.check_command or a.synthetic
    ]
    if gating and all(g.status == "passed" for g in gating):
        return "passed", []
    return "blocked", [
        Finding(
            severity="error",
            code="nothing_can_fail",
            message=(
                "no required check or block acceptance criterion with a command ran: "
                "a pass here would be counterfeit"
            ),
        )
    ]
