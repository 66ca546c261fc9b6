"""The workspace as values: what ``uh_core.workspace.store.Store`` builds from ``.harness/``.

Every value here is frozen and compared by equality, so a dashboard updates only the rows
whose value changed (and a script can diff two snapshots). Nothing here reads a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from uh_core.harness.rate import Tally, total
from uh_core.shown import clip, plural


@dataclass(frozen=True)
class CriterionView:
    ac_id: str
    severity: str = "block"
    status: str = "pending"  # pending | running | passed | failed | blocked | unobserved
    exit_code: int | None = None
    duration_ms: int | None = None
    timed_out: bool = False
    synthetic: bool = False
    flaky: bool = False
    description: str = ""
    command: str | None = None
    degraded: str | None = None  # the residual gap (forfeited evidence, owner, substitute)
    stdout: str = ""
    stderr: str = ""
    stdout_log: str | None = None
    stderr_log: str | None = None


@dataclass(frozen=True)
class RuntimeView:
    """One runtime of a mission: its comparison row, merged with its latest live run."""

    runtime: str
    # running | succeeded | failed | blocked | cancelled | error | interrupted (runner gone)
    status: str
    exit_code: int | None = None
    duration_ms: int | None = None
    diff_hash: str | None = None
    sandbox: str | None = None
    touched: tuple[str, ...] = ()
    final_message: str = ""
    error: str | None = None
    group: int | None = None  # index into ComparisonView.groups
    role: str = ""  # agreeing | divergent | failed | "" (no comparison yet)
    last_message: str = ""
    tokens: int = 0
    files_changed: int = 0  # a run's own count, where no comparison lists its paths


@dataclass(frozen=True)
class GroupView:
    diff_hash: str
    runtimes: tuple[str, ...]
    agreeing: bool = False


@dataclass(frozen=True)
class ComparisonView:
    status: str  # agreement | divergent | failed
    base_commit: str | None = None
    created_at: str | None = None
    groups: tuple[GroupView, ...] = ()
    findings: tuple[str, ...] = ()
    interrupted: bool = False
    # the consensus patch (runall/consensus.py): its line, then its hunks, agreed first
    consensus: str | None = None
    consensus_hunks: tuple[str, ...] = ()


@dataclass(frozen=True)
class HarnessProgressView:
    run_id: str | None
    status: str  # running | pass | fail | skipped | interrupted (its runner is gone)
    branch: str = ""
    attempt: int = 0
    stage: str | None = None
    failing_stage: str | None = None
    attempts: int = 0
    reason: str | None = None
    last_seen: str | None = None  # interrupted: when its run was last seen alive


@dataclass(frozen=True)
class TsRunView:
    """A run the TypeScript uh recorded (its ``mission run``: ``runs/index.json``), with the
    operator's verdict on it (its ``mission verdict``), newest first."""

    run_id: str
    status: str  # as that tool wrote it: running | passed | failed | blocked | cancelled | timeout
    runtime: str | None = None
    started_at: str = ""
    finished_at: str | None = None
    exit_code: int | None = None
    verdict: str | None = None  # pass | needs-attention | needs-remediation; None: not given
    latest: bool = False  # latest.json names it

    def line(self, runs: int = 1) -> str:
        """One line, the same in ``status`` and on the mission screen."""
        where = f" on {clip(self.runtime, 80)}" if self.runtime else ""
        verdict = f"verdict {clip(self.verdict, 40)}" if self.verdict else "no verdict"
        more = f" ({plural(runs, 'run')} recorded)" if runs > 1 else ""
        return (
            f"TypeScript uh run {clip(self.run_id, 80)}: {clip(self.status, 40)}{where},"
            f" {verdict}{more}"
        )


@dataclass(frozen=True)
class PromotionView:
    """The mission's latest promotion decision (``promotion.yaml``)."""

    decision: str  # promoted | rejected | deferred
    approved_by: str
    promoted_at: str
    source: str  # "sandbox SBX" or "branch harness/ID"
    verification_status: str = "unverified"
    forced: bool = False
    auto: bool = False
    commit: str | None = None
    decisions: int = 1  # how many decisions the record holds (history included)


@dataclass(frozen=True)
class MissionView:
    mission_id: str
    title: str = ""
    status: str = "pending"  # the mission file's status, or "invalid"
    # passed | failed | blocked | interrupted (its verify's process is gone) | - (never verified)
    verdict: str = "-"
    verdict_at: str | None = None  # interrupted: when that verify was last seen alive
    live: str | None = None  # what is running now, e.g. "verify 2/4" ("… on HOST": elsewhere)
    verifying: bool = False  # a verification is running (its output comes when it ends)
    criteria: tuple[CriterionView, ...] = ()
    findings: tuple[str, ...] = ()
    comparison: ComparisonView | None = None
    runtimes: tuple[RuntimeView, ...] = ()
    harness: HarnessProgressView | None = None
    error: str | None = None  # mission.yaml does not load
    problems: tuple[str, ...] = ()  # other malformed files or lines of this mission
    catching_up: float | None = None  # share of a long log's history folded so far
    events: int = 0
    depends_on: tuple[str, ...] = ()
    objective: str = ""
    promotion: PromotionView | None = None
    interrupted: tuple[str, ...] = ()  # running states whose process is gone, one line each
    ts_runs: tuple[TsRunView, ...] = ()  # what the TypeScript uh ran here, newest first
    # handed over as blocked: waiting for a human's answer, or answered (the next run
    # continues it); one line (uh_core.events.answers)
    handover: str | None = None
    answers: tuple[str, ...] = ()  # the pending answers: "by: text", in order

    @property
    def badge(self) -> str | None:
        """The one-word trouble marker of its row, if any."""
        if self.error:
            return "invalid"
        if self.problems:
            return "malformed"
        return None

    @property
    def green(self) -> HarnessProgressView | None:
        """Its latest harness run, when the gate passed it on its branch and it awaits a
        human (not promoted yet): its verdict on the main checkout says otherwise."""
        run = self.harness
        return (
            run if run is not None and run.status == "pass" and self.verdict != "promoted" else None
        )


@dataclass(frozen=True)
class SandboxView:
    id: str
    mission_id: str
    runtime: str | None = None
    kind: str = "runtime"
    branch: str | None = None
    base_commit: str = ""
    created_at: str = ""
    status: str = "active"
    worktree: str = ""
    exists: bool = True
    in_use: bool = False
    verify_status: str | None = None  # the last `verify --sandbox` verdict in it


@dataclass(frozen=True)
class RequirementView:
    """A mission's latest harness outcome, and its outcomes over every run (oldest first)."""

    mission_id: str
    run_id: str
    outcome: str  # pass | fail | blocked | skipped | running | interrupted (runner gone)
    attempts: int = 0
    max_attempts: int = 0
    failing_stage: str | None = None
    branch: str = ""
    duration_ms: int = 0
    budget: str = "-"
    reason: str | None = None
    history: tuple[str, ...] = ()
    # blocked for a human: the rounds as the summary shows them (hypothesis, scope, verdict)
    handover: tuple[str, ...] = ()
    # what the summary lists under its line: promises, degraded evidence, warnings, findings
    notes: tuple[str, ...] = ()
    promote: str | None = None  # passed: the command that lands it (uh-core promote …)
    # do the tests test the change: "fail-to-pass 2 · pass-to-pass 0 · vacuous 0", or why not
    fail_to_pass: str | None = None
    tokens: int = 0  # input + output its agents reported in that run
    cost: str = "-"  # "$0.3150", "cost unknown: <why>", "-" (no usage reported)


@dataclass(frozen=True)
class LedgerView:
    run_id: str
    status: str = "running"  # the ledger's; interrupted when it says running and its runner died
    started_at: str = ""
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    attempts: int = 0
    duration_ms: int = 0
    budget: str = "-"  # what the run used of its budget, when it had one
    blocked: int = 0  # handed over to a human, or blocked by a promise: counts against the rate
    errors: int = 0  # ended without a verdict (not judged)
    problem: str | None = None  # the ledger does not read
    tampered: tuple[str, ...] = ()  # changes an agent made to the operator's repository
    unconfined: str | None = None  # why agents ran without isolation, when they did
    last_seen: str | None = None  # interrupted (runner gone mid-run): when last seen alive
    budget_exhausted: int = 0  # stopped by a budget_usd (not judged)
    rate_limited: int = 0  # a provider's limit outlasted the run (not judged)
    interrupted: int = 0  # stopped by the operator before its gate ruled (not judged)
    # What its agents reported, summed (uh_core/harness/costs.py), and its cost: "$0.6300",
    # "cost unknown: <why>", or "-" when no agent reported usage.
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    cost: str = "-"

    @property
    def tally(self) -> Tally:
        """Its missions by outcome, and the pass rate's rule (``uh_core.harness.rate``)."""
        return Tally(
            self.passed, self.failed, self.blocked, self.skipped, self.errors,
            self.budget_exhausted, self.rate_limited, self.interrupted,
        )  # fmt: skip

    @property
    def pass_rate(self) -> float | None:
        """passed / (passed + failed + blocked); ``None`` when the run judged nothing."""
        return self.tally.rate


@dataclass(frozen=True)
class HarnessView:
    ledgers: tuple[LedgerView, ...] = ()  # oldest first
    requirements: tuple[RequirementView, ...] = ()
    running: str | None = None  # run id of a harness run in progress
    running_budget: str = ""  # what that run has used of its budget so far
    running_host: str | None = None  # the other host that run is on (unchecked from here)
    interrupted: str | None = None  # run id of the latest run, when its runner died mid-run
    interrupted_at: str | None = None  # when that run was last seen alive

    @property
    def pass_rates(self) -> tuple[float, ...]:
        """The rate of each run that judged something, oldest first (the sparkline)."""
        return tuple(r for r in (ledger.pass_rate for ledger in self.ledgers) if r is not None)

    @property
    def latest(self) -> LedgerView | None:
        """The newest run whose ledger reads (judged something or not)."""
        return next((run for run in reversed(self.ledgers) if not run.problem), None)

    @property
    def last_judged(self) -> LedgerView | None:
        """The newest readable run that judged a mission (a run with nothing to do judges
        none: its ``-`` would hide the last real result)."""
        return next(
            (run for run in reversed(self.ledgers) if not run.problem and run.tally.judged), None
        )

    @property
    def overall(self) -> Tally:
        """Every readable run's missions together: the same rule over all of them."""
        return total(run.tally for run in self.ledgers if not run.problem)


@dataclass(frozen=True)
class RuntimeOption:
    id: str
    kind: str = ""
    status: str = ""
    name: str = ""
    problem: str | None = None


@dataclass(frozen=True)
class EventLine:
    timestamp: str
    source: str  # mission id, or "audit"
    event: str
    text: str
    tone: str = ""  # good | bad | warn | live | "" (plain)


@dataclass(frozen=True)
class Snapshot:
    root: Path
    has_harness: bool = True
    missions: tuple[MissionView, ...] = ()
    sandboxes: tuple[SandboxView, ...] = ()
    sandbox_problem: str | None = None
    harness: HarnessView = field(default_factory=HarnessView)
    runtimes: tuple[RuntimeOption, ...] = ()
    malformed_lines: int = 0
    loaded: bool = False

    def mission(self, mission_id: str | None) -> MissionView | None:
        return next((m for m in self.missions if m.mission_id == mission_id), None)


@dataclass(frozen=True)
class Update:
    """One batch from the reader: the state now, and the event lines new since the last."""

    snapshot: Snapshot
    events: tuple[EventLine, ...] = ()
    dropped: int = 0  # new events not sent (only the newest are shown)
    reset: tuple[str, ...] = ()  # logs that were replaced or truncated and read again
