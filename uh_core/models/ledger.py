"""uh.harness-run.v0: the ledger of one ``harness run`` (``.harness/runs/<run-id>.json``).

Written whole after every requirement and at the end of every run, including a run that
failed or was interrupted. Every model keeps unknown keys, so a ledger written by a later
version (budgets, profiles, cost) still reads, and those fields can be added here without
breaking old files.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from uh_core.models.base import Open
from uh_core.models.proof import FailToPass
from uh_core.models.usage import TokenUsage
from uh_core.models.verification import Finding

LEDGER_SCHEMA = "uh.harness-run.v0"

# error: the mission's job ended without a result (its worker or node died: --executor ray);
# blocked: no node could run it (no node advertises its runtime), or its repair rounds ended
# red (no progress, or the last allowed round) and it is handed over to a human (``handover``).
# budget_exhausted: an attempt was not started, its expected cost would pass a budget_usd.
# rate_limited: the provider's limit outlasted the run's time budget, or came too often.
# interrupted: the operator stopped the run (Ctrl-C, harness cancel) before the mission's
# gate ruled: not judged, and `--resume` goes on from its branch.
Outcome = Literal[
    "pass", "fail", "skipped", "error", "blocked", "budget_exhausted", "rate_limited", "interrupted"
]
# rate_limited: the agent's provider refused it and its tree was not green: not charged.
AttemptOutcome = Literal["pass", "fail", "interrupted", "error", "tampered", "rate_limited"]
RunStatus = Literal["running", "completed", "interrupted", "error", "tampered"]


def fail_to_pass_of(stages: list[StageResult]) -> FailToPass | None:
    """The fail-to-pass record of a round's tests stage, when it has one."""
    for stage in stages:
        if stage.stage == "tests" and isinstance(stage.evidence.get("fail_to_pass"), dict):
            return FailToPass.model_validate(stage.evidence["fail_to_pass"])
    return None


class StageResult(Open):
    """One gate stage of one attempt: what was judged and the evidence."""

    stage: str
    passed: bool
    detail: str = ""  # one line, for events and summaries
    output: str = ""  # what the next prompt and a reviewer read (bounded)
    findings: list[Finding] = Field(default_factory=list)
    evidence: dict[str, Any] = Field(default_factory=dict)
    duration_ms: int = 0


class SteerRecord(Open):
    """A human's steering message to this round's agent, and how it reached it."""

    message: str
    by: str = ""
    at: str = ""  # when it was sent
    delivery: str = ""
    delivered: bool = True


class AgentRecord(Open):
    runtime: str
    command: str
    exit_code: int | None = None
    timed_out: bool = False
    rate_limited: bool = False  # its provider refused it (uh_core/adapters/ratelimit.py)
    retry_after_s: float | None = None  # when the limit lifts, where the CLI said
    cancelled: str | None = None
    duration_ms: int = 0
    stdout_log: str | None = None
    stderr_log: str | None = None
    # the operator's steering this round (uh-core mission steer): each message and how it
    # was delivered; ``continued`` counts the agent's sessions continued with one
    steered: list[SteerRecord] = Field(default_factory=list)
    continued: int = 0


class AttemptRecord(Open):
    """One repair round: the prompt sent, the agent's hypothesis, the gate's verdict."""

    attempt: int
    started_at: str
    finished_at: str | None = None
    outcome: AttemptOutcome = "error"
    stage: str | None = None  # the failing stage (None when green)
    failure_output: str = ""
    final_message: str = ""  # the agent's own account: its hypothesis for this round
    files_changed: list[str] = Field(default_factory=list)
    tree: str | None = None  # the snapshot the gate judged (a tree object)
    # the agent was stopped at its deadline: the tree as it stood was judged (a green counts)
    timed_out: bool = False
    retry_after_s: float | None = None  # rate_limited: when the limit lifts, where the CLI said
    isolation: str | None = None  # how the agent ran: "bwrap" or "none"
    isolation_note: str | None = None  # why it ran unconfined
    survivors: list[str] = Field(default_factory=list)  # processes it left, stopped by uh
    tampered: list[str] = Field(default_factory=list)  # each change to the operator's repo
    diff_hash: str | None = None  # the hash of its diff against the base commit
    verdict: str = ""
    prompt_file: str | None = None
    profile: str | None = None
    cost_per_run_hint: float | None = None  # the profile's declared cost of one attempt
    # The tokens the agent's CLI reported, per model, and their cost at the run's prices:
    # cost_usd None with cost_note saying why (no price for a model, no usage reported).
    usage: list[TokenUsage] = Field(default_factory=list)
    cost_usd: float | None = None
    cost_note: str | None = None
    agent: AgentRecord | None = None
    stages: list[StageResult] = Field(default_factory=list)
    # This round's own change (from the previous round's tree, or the base): its signature,
    # files and lines without positions, so the same edit made again reads the same.
    change: str | None = None
    # The judge this round ran (criteria ids, commands, severities, checks, tdd, the test
    # command, selectors): its hash, the same in every round of a mission.
    judge: str | None = None
    # Added lines of its diff with a shape of judge tampering ("path:line: code: text",
    # uh_core.judge.scan): a green with any reads "needs review", never plain passed.
    review: list[str] = Field(default_factory=list)


HandoverCode = Literal["no_progress", "rounds_exhausted"]


class HandoverAnswer(Open):
    """A human's answer to a hand-over (``uh-core harness answer``), sent in every prompt of
    the rounds that continued the mission."""

    answer: str
    by: str = ""
    at: str = ""
    handover_run: str | None = None  # the run whose hand-over it answered


class GreenPromotion(Open):
    """``harness run --promote-green``: the promotion tried right after the gate passed."""

    approved_by: str
    commit: str | None = None  # the promotion commit on the operator's branch
    onto: str | None = None  # that branch
    refused: str | None = None  # why it could not be made (the branch waits for a human)


class RoundFile(Open):
    path: str
    added: int = 0
    removed: int = 0


class HandoverRound(Open):
    """One repair round as the human taking over reads it."""

    round: int
    hypothesis: str = "none given"  # the agent's final message
    files: list[RoundFile] = Field(default_factory=list)  # the change judged, against the base
    verdict: str = ""  # the rerun verdict on the same criteria
    criteria: dict[str, str] = Field(default_factory=dict)  # criterion id → its status
    prompt_file: str | None = None  # the prompt sent


class Handover(Open):
    """Why a mission's rounds ended without a green, handed to a human (outcome blocked)."""

    code: HandoverCode
    reason: str
    rounds: list[HandoverRound] = Field(default_factory=list)


class RequirementRecord(Open):
    mission_id: str
    title: str = ""
    outcome: Outcome = "skipped"
    reason: str | None = None
    branch: str
    sandbox_id: str | None = None
    worktree: str | None = None
    base_commit: str | None = None
    commit: str | None = None  # the harness's commit on the branch (green only)
    failing_stage: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    duration_ms: int = 0
    attempts: list[AttemptRecord] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)  # carried to the reviewer
    # Why it was skipped, as a code: a plan blocker's code, "budget", "status", "branch_exists"…
    skip_code: str | None = None
    warnings: list[str] = Field(default_factory=list)  # blockers it ran despite
    profile: str | None = None  # the profile the mission ran under (None: the run's default)
    resumed: dict[str, Any] | None = None  # --resume: what was recovered, what was charged
    node: str | None = None  # --executor ray: the node the mission ran on
    # --executor ray: seconds the job spent making its workspace, running, packing its
    # result (on the worker) and landing it (on the head)
    job_timings: dict[str, float] = Field(default_factory=dict)
    # Blocked for a human: no progress between rounds, or every allowed round spent red.
    handover: Handover | None = None
    # The human's answers to the hand-over these rounds continued (harness answer).
    answers: list[HandoverAnswer] = Field(default_factory=list)
    # Lines a human changed in this mission's sandbox (uh-core sandbox shell): its judged
    # tree holds them beside the agent's (.harness/sandboxes/<id>/human.json says which)
    human_lines: int = 0
    # --promote-green: the promotion made (or refused) right after the gate passed
    promotion: GreenPromotion | None = None
    # Steering sent to these rounds that none of them could take (they had ended): each
    # round's own is under its agent (attempts[].agent.steered).
    steering_left: list[SteerRecord] = Field(default_factory=list)
    # Promised but absent: criteria without a check command, selectors matching no test.
    promises: list[str] = Field(default_factory=list)
    # Degraded criteria: the forfeited evidence, its owner and substitute, one line each.
    residuals: list[str] = Field(default_factory=list)
    # The last attempt's review lines (uh_core.judge.scan): a green with any "needs review".
    review: list[str] = Field(default_factory=list)
    # Provider limits (uh_core/harness/parking.py): each wait ({attempt, runtime, at, until,
    # wait_s, reason}), and each hand-over to a fallback runtime ("a → b: why").
    parked: list[dict[str, Any]] = Field(default_factory=list)
    fallbacks: list[str] = Field(default_factory=list)

    @property
    def steered(self) -> int:
        """Steering messages delivered to its agents in these rounds (``Uh-Steered``)."""
        return sum(
            1 for a in self.attempts if a.agent is not None for s in a.agent.steered if s.delivered
        )


class RunSettings(Open):
    agent: str | None = None
    runtime: str | None = None
    test_cmd: str | None = None
    max_attempts: int = 3
    timeout_s: float | None = None
    force: bool = False
    strict_tests: bool = False
    strict_artifacts: bool = False
    requested: list[str] = Field(default_factory=list)
    message_report: str | None = None
    protected_paths: list[str] = Field(default_factory=list)
    allow_paths: list[str] = Field(default_factory=list)
    skip_not_ready: bool = False
    budget_seconds: float | None = None
    max_requirements: int | None = None
    budget_usd: float | None = None
    fallback_runtimes: list[str] = Field(default_factory=list)
    pricing: dict[str, dict[str, float | None]] = Field(default_factory=dict)  # USD per 1M
    resume: bool = False
    profile: str | None = None
    isolation: str = "auto"
    jobs: int = 1  # missions at once
    executor: str = "local"  # local | ray
    ray_address: str | None = None
    # --executor ray --trust-workers: a worker's green stood without the head's re-judge
    trust_workers: bool = False


class Totals(Open):
    missions: int = 0
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    errors: int = 0  # ended without a result (a lost worker)
    blocked: int = 0  # no node could run it, or handed over to a human
    budget_exhausted: int = 0  # stopped by a budget_usd before an attempt
    rate_limited: int = 0  # a provider's limit outlasted the run (not judged)
    interrupted: int = 0  # stopped by the operator before its gate ruled (not judged)
    judged: int = 0  # passed + failed + blocked (uh_core/harness/rate.py)
    pass_rate: float | None = None  # passed / judged; None when nothing was judged
    attempts: int = 0
    duration_ms: int = 0


class HarnessLedger(Open):
    schema_version: Literal["uh.harness-run.v0"] = "uh.harness-run.v0"
    run_id: str
    # Every change an agent made to the operator's repository ("<mission> attempt N: …");
    # any makes the run "tampered": it stopped there, nothing was repaired.
    tampered: list[str] = Field(default_factory=list)
    # How agents ran: every attempt's isolation, once ("bwrap", or "none: <why>").
    isolation: list[str] = Field(default_factory=list)
    status: RunStatus = "running"
    started_at: str
    finished_at: str | None = None
    root: str
    base_commit: str | None = None
    settings: RunSettings = Field(default_factory=RunSettings)
    requirements: list[RequirementRecord] = Field(default_factory=list)
    totals: Totals = Field(default_factory=Totals)
    stopped: str | None = None  # why the loop stopped before the end of its list
    budget: dict[str, float | int | None] = Field(default_factory=dict)  # limits and use
    error: str | None = None
    # Tokens and cost per mission, per runtime and for the run (uh_core/harness/costs.py).
    usage: dict[str, Any] = Field(default_factory=dict)
    # What agents left running that only the end of a --jobs run found, stopped then.
    survivors: list[str] = Field(default_factory=list)
