"""The status rules of contract §4, first match wins, as pure functions."""

from __future__ import annotations

from uh_core.models.verification import ACResult, CheckResult
from uh_core.verify.rules import decide, summarise


def ac(status: str, severity: str = "block", command: str | None = "true", **kw) -> ACResult:
    return ACResult(
        id=f"a-{status}-{severity}", status=status, severity=severity, check_command=command, **kw
    )


def check(status: str, command: str | None = "true", kind: str = "command") -> CheckResult:
    return CheckResult(name=f"c-{status}", type=kind, status=status, command=command)


def test_failed_block_ac_fails_even_with_blocked_ones() -> None:
    status, _ = decide([], [ac("failed"), ac("blocked", command=None)])
    assert status == "failed"


def test_failed_required_check_fails() -> None:
    assert decide([check("failed")], [ac("passed")])[0] == "failed"


def test_blocked_block_ac_blocks() -> None:
    assert decide([check("passed")], [ac("passed"), ac("blocked", command=None)])[0] == "blocked"


def test_unobserved_flaky_block_ac_blocks_never_passes() -> None:
    assert decide([], [ac("passed"), ac("unobserved", flaky=True)])[0] == "blocked"


def test_passing_block_ac_alone_passes_without_required_checks() -> None:
    assert decide([], [ac("passed")]) == ("passed", [])


def test_passing_required_check_alone_passes() -> None:
    assert decide([check("passed")], [])[0] == "passed"


def test_warn_acs_never_change_the_status() -> None:
    assert decide([], [ac("passed"), ac("failed", "warn")])[0] == "passed"
    assert decide([], [ac("failed"), ac("passed", "warn")])[0] == "failed"


def test_nothing_that_can_fail_ran_is_blocked_with_a_finding() -> None:
    for checks, criteria in (
        ([], []),
        ([], [ac("passed", "warn")]),
        ([check("unobserved", None, "manual")], [ac("failed", "warn")]),
    ):
        status, findings = decide(checks, criteria)
        assert status == "blocked"
        assert [f.code for f in findings] == ["nothing_can_fail"]


def test_required_check_without_command_blocks() -> None:
    assert decide([check("blocked", command=None)], [ac("passed")])[0] == "blocked"


def test_manual_checks_do_not_gate() -> None:
    assert decide([check("unobserved", None, "manual")], [ac("passed")])[0] == "passed"


def test_summary_counts() -> None:
    summary = summarise(
        [
            check("passed"),
            check("failed"),
            check("blocked", None),
            check("unobserved", None, "manual"),
        ],
        [
            ac("passed"),
            ac("failed"),
            ac("failed", "warn"),
            ac("blocked", command=None),
            ac("blocked", "warn", None),
            ac("unobserved", flaky=True),
        ],
    )
    assert summary.checks.model_dump() == {"passed": 1, "failed": 1, "blocked": 1, "total": 3}
    assert summary.acceptance.model_dump() == {
        "passed": 1,
        "block_failed": 1,
        "warn_failed": 1,
        "blocked": 2,
        "unobserved": 1,
        "total": 6,
    }
