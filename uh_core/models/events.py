"""The event union (contract §8): one model per type, discriminated on ``event``.

Writers build these models; readers parse lines into them, normalising the TypeScript uh's
key spellings first, and fall back to ``UnknownEvent`` for types they do not know.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
)


class BaseEvent(BaseModel):
    # Schemas are built on first use: a writer pays for the few types it emits, never for
    # the whole union (building every schema at import was 80 ms of each command's start).
    model_config = ConfigDict(extra="allow", defer_build=True)

    event: str
    timestamp: str = ""
    mission_id: str | None = None
    run_id: str | None = None


class Owner(BaseModel):
    """The process a running state belongs to (``uh_core.procid``): readers treat the state
    as interrupted once this process is gone (its pid free, or reused by another process)."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    pid: int
    start_time: int | None = None  # /proc/<pid>/stat field 22: the pid's current holder
    host: str | None = None

    @classmethod
    def here(cls) -> Owner:
        """This process."""
        from uh_core.procid import current

        me = current()
        return cls(pid=me.pid, start_time=me.start_time, host=me.host)


class Owned(BaseEvent):
    """A ``*.started`` event: what starts running, and (optional) the process that runs it.
    Logs written before owners were recorded, or an owner that does not parse, read as
    ``owner: None`` (the state is shown as its events say, unchecked)."""

    owner: Owner | None = None

    @field_validator("owner", mode="wrap")
    @classmethod
    def _lenient(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Owner | None:
        try:
            owner: Owner | None = handler(value)
        except ValidationError:
            return None
        return owner


class ProjectInitialized(BaseEvent):
    event: Literal["project.initialized"] = "project.initialized"
    created: list[str] = Field(default_factory=list)


class VerificationStarted(Owned):
    event: Literal["verification.started"] = "verification.started"
    total_checks: int = 0
    total_acceptance: int = 0
    repeat: int = 1


class CheckChecked(BaseEvent):
    event: Literal["check.checked"] = "check.checked"
    name: str = ""
    status: str = ""
    exit_code: int | None = None
    duration_ms: int = 0
    timed_out: bool = False


class AcceptanceStarted(BaseEvent):
    event: Literal["acceptance.started"] = "acceptance.started"
    ac_id: str = ""
    index: int = 0
    total: int = 0


class AcceptanceChecked(BaseEvent):
    event: Literal["acceptance.checked"] = "acceptance.checked"
    ac_id: str = ""
    status: str = ""
    severity: str = "block"
    exit_code: int | None = None
    duration_ms: int = 0
    timed_out: bool = False
    synthetic: bool = False
    flaky: bool = False


class VerificationFinished(BaseEvent):
    event: Literal["verification.finished"] = "verification.finished"
    status: str = ""
    summary: dict[str, Any] = Field(default_factory=dict)
    artifact: str | None = None


class DiffCaptured(BaseEvent):
    event: Literal["diff.captured"] = "diff.captured"
    path: str = ""
    base: str = ""
    files: int = 0
    bytes: int = 0


class RuntimeStarted(Owned):
    event: Literal["runtime.started"] = "runtime.started"
    runtime: str = ""
    sandbox_id: str | None = None
    command: str | None = None
    # The agent's process: the leader of its own session and process group (pid = pgid =
    # sid), with its start time. Recorded by ``harness run`` so that, once the runner is
    # gone, ``--resume`` can name and stop a group that outlived it (uh_core.harness.survivors).
    agent: Owner | None = None

    @field_validator("agent", mode="wrap")
    @classmethod
    def _lenient_agent(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Owner | None:
        try:
            agent: Owner | None = handler(value)
        except ValidationError:
            return None
        return agent


class RuntimeProgress(BaseEvent):
    event: Literal["runtime.progress"] = "runtime.progress"
    runtime: str = ""
    kind: str = "log"
    message: str = ""


class RuntimeFinished(BaseEvent):
    event: Literal["runtime.finished"] = "runtime.finished"
    runtime: str = ""
    status: str = ""
    exit_code: int | None = None
    duration_ms: int = 0
    diff_hash: str | None = None
    files_changed: int = 0
    reason: str | None = None  # why a run was blocked, errored or failed
    retry_after_s: float | None = None  # rate_limited: when the provider's limit lifts
    # the agent's own account (its final-message block), bounded: what `mission run` printed
    final_message: str = ""


class RuntimeCancelled(BaseEvent):
    event: Literal["runtime.cancelled"] = "runtime.cancelled"
    runtime: str = ""
    reason: str = ""


class RuntimeUsage(BaseEvent):
    """One model's tokens in one run (one event per model the CLI reported), as its CLI
    counted them: ``input_tokens`` includes the cache reads and writes."""

    event: Literal["runtime.usage"] = "runtime.usage"
    runtime: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    source: str = "runtime"
    model: str | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reported_cost_usd: float | None = None  # the CLI's own figure
    attempt: int | None = None  # harness run: the attempt it belongs to


class RuntimeCompared(BaseEvent):
    event: Literal["runtime.compared"] = "runtime.compared"
    runtime: str = ""
    status: str = ""
    exit_code: int | None = None
    duration_ms: int = 0
    diff_hash: str | None = None
    diff_files: int = 0
    sandbox_id: str | None = None


class RuntimeComparisonSummary(BaseEvent):
    event: Literal["runtime.comparison.summary"] = "runtime.comparison.summary"
    status: str = ""
    agreement: bool = False
    agreement_runtimes: list[str] = Field(default_factory=list)
    divergent_runtimes: list[str] = Field(default_factory=list)
    failed_runtimes: list[str] = Field(default_factory=list)


class SteeringMessage(BaseEvent):
    """A human's message to the agent at work (``uh-core mission steer``): addressed to the
    run in ``run_id``, which delivers it (``runtime.steered``)."""

    event: Literal["steering.message"] = "steering.message"
    runtime: str = ""
    message: str = ""
    by: str = ""


class SandboxHumanChanged(BaseEvent):
    """A human changed a sandbox's tree (``uh-core sandbox shell``): recorded apart from its
    agent's change (``.harness/sandboxes/<id>/human.json``, the diff in ``patch``)."""

    event: Literal["sandbox.human.changed"] = "sandbox.human.changed"
    sandbox_id: str = ""
    by: str = ""
    files: list[str] = Field(default_factory=list)
    added: int = 0
    removed: int = 0
    patch: str = ""


class RuntimeSteered(BaseEvent):
    """A steering message delivered by the run it was sent to, and how: the agent's session
    continued in the same sandbox, or in the next round's prompt; or why it was not."""

    event: Literal["runtime.steered"] = "runtime.steered"
    runtime: str = ""
    message: str = ""
    by: str = ""
    requested_at: str = ""
    delivery: str = ""
    delivered: bool = True
    attempt: int | None = None


class HarnessRunStarted(Owned):
    event: Literal["harness.run.started"] = "harness.run.started"
    missions: list[str] = Field(default_factory=list)
    budget: dict[str, Any] = Field(default_factory=dict)


class HarnessRunFinished(BaseEvent):
    event: Literal["harness.run.finished"] = "harness.run.finished"
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    # the run's other outcomes (uh_core/harness/rate.py): without them a run whose missions
    # were handed over read like a clean one in `tail` and the event pane
    blocked: int = 0
    errors: int = 0
    interrupted: int = 0
    status: str | None = None
    ledger: str | None = None
    stopped: str | None = None
    budget: dict[str, Any] = Field(default_factory=dict)


class HarnessRequirementStarted(Owned):
    event: Literal["harness.requirement.started"] = "harness.requirement.started"
    branch: str = ""


class HarnessRequirementFinished(BaseEvent):
    event: Literal["harness.requirement.finished"] = "harness.requirement.finished"
    branch: str = ""
    outcome: str = ""
    attempts: int = 0
    reason: str | None = None
    code: str | None = None  # why skipped: a plan blocker's code, "budget", …


class HarnessHandoverAnswered(BaseEvent):
    """A human's answer to a mission handed over as ``blocked`` (``uh-core harness answer``):
    the next ``harness run`` continues the mission from its last round's tree with every
    answer since the hand-over in the prompt (``uh_core.events.answers``)."""

    event: Literal["harness.handover.answered"] = "harness.handover.answered"
    answer: str = ""
    by: str = ""
    handover_run: str | None = None  # the run whose hand-over it answers
    code: str | None = None  # that hand-over's code: no_progress | rounds_exhausted


class HarnessAttemptStarted(BaseEvent):
    event: Literal["harness.attempt.started"] = "harness.attempt.started"
    attempt: int = 0
    profile: str | None = None


class HarnessParked(BaseEvent):
    """A provider limit stopped an attempt (not charged): the mission waits until ``until``
    (the runtime's limit lifts), then tries again."""

    event: Literal["harness.mission.parked"] = "harness.mission.parked"
    attempt: int = 0
    runtime: str = ""
    until: str = ""
    wait_s: float = 0.0
    reason: str | None = None


class HarnessFallback(BaseEvent):
    """A provider limit handed the mission to the next of ``fallback_runtimes``."""

    event: Literal["harness.mission.fallback"] = "harness.mission.fallback"
    attempt: int = 0
    runtime: str = ""  # the runtime that was limited
    to: str = ""  # the one that takes over
    reason: str | None = None


class HarnessAttemptFinished(BaseEvent):
    event: Literal["harness.attempt.finished"] = "harness.attempt.finished"
    attempt: int = 0
    outcome: str = ""
    stage: str | None = None


class SecurityTampered(BaseEvent):
    """An agent (or code it wrote, run by a check) changed the operator's repository: HEAD,
    refs, hooks, config, work tree, index or ``.harness/`` records. The attempt is
    ``tampered`` and the run stops; nothing was repaired."""

    event: Literal["security.tampered"] = "security.tampered"
    attempt: int | None = None
    runtime: str | None = None
    changes: list[str] = Field(default_factory=list)


class HarnessBudgetChecked(BaseEvent):
    """Before each mission starts (audit log): what the run has used of its budget."""

    event: Literal["harness.budget.checked"] = "harness.budget.checked"
    next_mission: str = ""
    elapsed_s: float = 0.0
    budget_seconds: float | None = None
    started: int = 0
    max_requirements: int | None = None
    exhausted: str | None = None  # the reason, when the mission will not start


class HarnessRequirementSkipped(BaseEvent):
    """A mission the run passed over (audit log): readiness, budget, branch, status."""

    event: Literal["harness.requirement.skipped"] = "harness.requirement.skipped"
    code: str | None = None
    reason: str = ""


class HarnessGateChecked(BaseEvent):
    event: Literal["harness.gate.checked"] = "harness.gate.checked"
    attempt: int = 0
    stage: str = ""
    passed: bool = False
    detail: str = ""


class PromotionRecorded(BaseEvent):
    """An operator's decision (mission log and audit log); ``event_id`` = the record's
    ``audit_event_id``."""

    event: Literal["promotion.recorded"] = "promotion.recorded"
    event_id: str = ""
    decision: str = ""
    approved_by: str = ""
    source: str = ""  # sandbox | branch
    sandbox_id: str | None = None
    branch: str | None = None
    runtime: str | None = None
    changes: list[str] = Field(default_factory=list)
    commit: str | None = None
    verification_status: str = ""
    forced: bool = False
    auto: bool = False
    artifact: str | None = None


class PromotionAutoTriggered(BaseEvent):
    """A passing ``verify --sandbox`` under ``sandbox.promotion_policy: auto-on-verify``."""

    event: Literal["promotion.auto-triggered"] = "promotion.auto-triggered"
    event_id: str = ""
    sandbox_id: str = ""
    runtime: str | None = None
    verify_run_id: str | None = None
    branch: str | None = None  # harness run --promote-green: the branch that passed


class PromotionAutoFailed(BaseEvent):
    """The automatic promotion could not apply; the verify result stands, a human decides."""

    event: Literal["promotion.auto-failed"] = "promotion.auto-failed"
    event_id: str = ""
    sandbox_id: str = ""
    runtime: str | None = None
    verify_run_id: str | None = None
    reason: str = ""
    branch: str | None = None


KnownEvent = Annotated[
    ProjectInitialized
    | VerificationStarted
    | CheckChecked
    | AcceptanceStarted
    | AcceptanceChecked
    | VerificationFinished
    | DiffCaptured
    | RuntimeStarted
    | RuntimeProgress
    | RuntimeFinished
    | RuntimeCancelled
    | RuntimeUsage
    | RuntimeCompared
    | RuntimeComparisonSummary
    | SteeringMessage
    | RuntimeSteered
    | SandboxHumanChanged
    | HarnessRunStarted
    | HarnessRunFinished
    | HarnessRequirementStarted
    | HarnessRequirementFinished
    | HarnessHandoverAnswered
    | HarnessAttemptStarted
    | HarnessBudgetChecked
    | HarnessRequirementSkipped
    | HarnessParked
    | HarnessFallback
    | HarnessAttemptFinished
    | HarnessGateChecked
    | SecurityTampered
    | PromotionRecorded
    | PromotionAutoTriggered
    | PromotionAutoFailed,
    Field(discriminator="event"),
]


class UnknownEvent(BaseEvent):
    """A type this version does not model (or a known one with a foreign payload)."""


Event = KnownEvent | UnknownEvent


# Each known type's model by its name: what the union's discriminator would pick. Readers
# validate a line with its own type's model: building the union's validator would build
# every model, about 100 ms before a dashboard's first frame could show.
EVENT_TYPES: dict[str, type[BaseEvent]] = {
    model.model_fields["event"].default: model
    for model in KnownEvent.__origin__.__args__  # type: ignore[attr-defined]
}
