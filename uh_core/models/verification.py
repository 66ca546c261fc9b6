"""uh.verification-result.v0 (verification.yaml, contract §4)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from uh_core.models.base import Plain
from uh_core.models.degraded import Degraded
from uh_core.models.mission import Severity
from uh_core.models.proof import FailToPass

ACStatus = Literal["passed", "failed", "blocked", "unobserved"]
CheckStatus = Literal["passed", "failed", "blocked", "unobserved"]
VerdictStatus = Literal["passed", "failed", "blocked"]


class Finding(Plain):
    severity: Literal["error", "warning"]
    code: str
    message: str
    ac_id: str | None = None


class CheckResult(Plain):
    name: str
    type: Literal["command", "manual"]
    status: CheckStatus
    command: str | None = None
    exit_code: int | None = None
    duration_ms: int = 0
    timed_out: bool = False
    flaky: bool = False
    stdout_snippet: str = ""
    stderr_snippet: str = ""
    stdout_log: str | None = None
    stderr_log: str | None = None


class ACResult(Plain):
    id: str
    description: str = ""
    severity: Severity = "block"
    check_command: str | None = None
    status: ACStatus
    exit_code: int | None = None
    duration_ms: int = 0
    timed_out: bool = False
    stdout_snippet: str = ""
    stderr_snippet: str = ""
    stdout_log: str | None = None
    stderr_log: str | None = None
    synthetic: bool = False
    flaky: bool = False
    runs: list[Literal["passed", "failed"]] = Field(default_factory=list)
    degraded: Degraded | None = None  # its verdict is the substitute's; the gap is named
    needs: list[str] = Field(default_factory=list)  # what it was granted: network, VAR, …


class CheckSummary(Plain):
    passed: int = 0
    failed: int = 0
    blocked: int = 0
    total: int = 0


class AcceptanceSummary(Plain):
    passed: int = 0
    block_failed: int = 0
    warn_failed: int = 0
    blocked: int = 0
    unobserved: int = 0
    total: int = 0


class Summary(Plain):
    checks: CheckSummary = Field(default_factory=CheckSummary)
    acceptance: AcceptanceSummary = Field(default_factory=AcceptanceSummary)


class VerificationResult(Plain):
    schema_version: Literal["uh.verification-result.v0"] = "uh.verification-result.v0"
    mission_id: str
    run_id: str
    status: VerdictStatus
    started_at: str
    finished_at: str
    root: str | None = None
    repeat: int = 1
    checks: list[CheckResult] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    acceptance_criteria: list[ACResult] = Field(default_factory=list)
    summary: Summary = Field(default_factory=Summary)
    # What a sandbox's verify judged: the sandbox, its tree (a snapshot taken by uh just
    # before the checks ran) and the hash of its diff. A promotion applies only that tree.
    sandbox_id: str | None = None
    judged_tree: str | None = None
    # verify --sandbox: its tests criterion's proof that the tests test the change
    fail_to_pass: FailToPass | None = None
    judged_diff_hash: str | None = None
    # How the checks ran over the agent's work: "confined: bwrap (…)" or "unconfined: why"
    # (None: the operator's own checkout, which is not judged confined).
    isolation: str | None = None
