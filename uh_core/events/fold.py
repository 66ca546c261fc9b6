"""The whole fold of a mission log: verification, runtime runs and the harness loop.

``uh_core.events.observe.MissionState`` folds verification events; ``MissionFold`` wraps it
and folds runtime runs (``runtime.*``) and the harness loop (``harness.*``) from the same
typed events, the same way (pure, order-preserving, stragglers of older runs and unknown
events ignored). Each running state keeps the owner its ``*.started`` event recorded and the
timestamp of its run's last event (``seen``); whether that owner is still alive is asked by
the workspace (``uh_core.workspace.liveness``), never here: the fold reads no process.
``AuditFold`` folds the project-level log (a harness run and its budget). The dashboard's
views and any script read live progress through these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from uh_core.events.answers import AnswerFold
from uh_core.events.observe import MissionState
from uh_core.models.events import (
    BaseEvent,
    HarnessAttemptFinished,
    HarnessAttemptStarted,
    HarnessBudgetChecked,
    HarnessGateChecked,
    HarnessParked,
    HarnessRequirementFinished,
    HarnessRequirementStarted,
    HarnessRunFinished,
    HarnessRunStarted,
    Owner,
    RuntimeCancelled,
    RuntimeComparisonSummary,
    RuntimeFinished,
    RuntimeProgress,
    RuntimeStarted,
    RuntimeUsage,
)


@dataclass
class RuntimeRun:
    """The latest run of one runtime on one mission."""

    runtime: str
    run_id: str | None = None
    sandbox_id: str | None = None
    status: str = "running"  # running | succeeded | failed | blocked | cancelled | error
    started_at: str = ""
    finished_at: str = ""
    exit_code: int | None = None
    duration_ms: int = 0
    diff_hash: str | None = None
    files_changed: int = 0
    last_message: str = ""
    final_message: str = ""  # the agent's own account, as runtime.finished carries it
    reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    owner: Owner | None = None  # the runner, as runtime.started recorded it
    seen: str = ""  # the timestamp of this run's last event
    node: str | None = None  # --executor ray: the node its events came from

    @property
    def running(self) -> bool:
        return self.status == "running"


@dataclass
class HarnessProgress:
    """Where the harness loop is with one mission (from ``harness.requirement.*``)."""

    run_id: str | None
    branch: str = ""
    status: str = "running"  # running | pass | fail | skipped
    started_at: str = ""
    attempt: int = 0
    stage: str | None = None  # the gate stage checked last
    stage_passed: bool | None = None
    failing_stage: str | None = None
    attempts: int = 0
    reason: str | None = None
    owner: Owner | None = None  # the harness runner, as harness.requirement.started recorded it
    seen: str = ""  # the timestamp of the run's last event in this log
    node: str | None = None  # --executor ray: the node its events came from
    # parked by a provider's limit: when it resumes, and the runtime that was limited
    parked_until: str | None = None
    parked_runtime: str | None = None

    @property
    def running(self) -> bool:
        return self.status == "running"


def _node(event: BaseEvent) -> str | None:
    """The ``node`` a relayed event carries (``--executor ray``), if any."""
    node = getattr(event, "node", None)
    return node if isinstance(node, str) and node else None


@dataclass
class MissionFold:
    """One mission's log folded: verification (uh_core), runtimes and harness (here)."""

    mission_id: str
    verify: MissionState = field(init=False)
    runtimes: dict[str, RuntimeRun] = field(default_factory=dict)
    comparison_status: str | None = None
    harness: HarnessProgress | None = None
    answers: AnswerFold = field(default_factory=AnswerFold)  # its hand-over and answers

    def __post_init__(self) -> None:
        self.verify = MissionState(self.mission_id)

    @property
    def running(self) -> bool:
        return (
            self.verify.running
            or any(run.running for run in self.runtimes.values())
            or (self.harness is not None and self.harness.running)
        )

    def skipped(self, lines: int) -> None:
        """History lines the fast fold passed over (``uh_core.events.history``): counted."""
        self.verify.events += lines

    def apply(self, event: BaseEvent) -> None:
        self.verify.apply(event)
        self.answers.apply(event)
        if isinstance(event, RuntimeStarted):
            self.runtimes[event.runtime] = RuntimeRun(
                event.runtime,
                run_id=event.run_id,
                sandbox_id=event.sandbox_id,
                started_at=event.timestamp,
                owner=event.owner,
                seen=event.timestamp,
                node=_node(event),
            )
            self._seen_by_harness(event)
            return
        if isinstance(event, RuntimeProgress | RuntimeFinished | RuntimeCancelled | RuntimeUsage):
            run = self.runtimes.get(event.runtime)
            if run is None or (event.run_id and run.run_id and event.run_id != run.run_id):
                return  # a straggler from an older run (or a run we never saw start)
            run.seen = event.timestamp or run.seen
            self._seen_by_harness(event)
            if isinstance(event, RuntimeProgress):
                if event.message.strip():
                    run.last_message = event.message.strip()
            elif isinstance(event, RuntimeFinished):
                run.status = event.status or "error"
                run.finished_at = event.timestamp
                run.exit_code = event.exit_code
                run.duration_ms = event.duration_ms
                run.diff_hash = event.diff_hash
                run.files_changed = event.files_changed
                run.final_message = event.final_message
                run.reason = event.reason
            elif isinstance(event, RuntimeCancelled):
                run.reason = event.reason or run.reason
            else:
                run.input_tokens += event.input_tokens
                run.output_tokens += event.output_tokens
            return
        if isinstance(event, RuntimeComparisonSummary):
            self.comparison_status = event.status
            return
        self._apply_harness(event)

    def _apply_harness(self, event: BaseEvent) -> None:
        if isinstance(event, HarnessRequirementStarted):
            self.harness = HarnessProgress(
                event.run_id,
                branch=event.branch,
                started_at=event.timestamp,
                owner=event.owner,
                seen=event.timestamp,
                node=_node(event),
            )
            return
        harness = self.harness
        if harness is None or (event.run_id and harness.run_id and event.run_id != harness.run_id):
            return
        self._seen_by_harness(event)
        if isinstance(event, HarnessAttemptStarted):
            harness.attempt = event.attempt
            harness.stage = None
            harness.stage_passed = None
            harness.parked_until = harness.parked_runtime = None
        elif isinstance(event, HarnessParked):
            harness.parked_until, harness.parked_runtime = event.until, event.runtime
        elif isinstance(event, HarnessGateChecked):
            harness.stage = event.stage
            harness.stage_passed = event.passed
            if not event.passed:
                harness.failing_stage = event.stage
        elif isinstance(event, HarnessAttemptFinished):
            harness.attempts = max(harness.attempts, event.attempt)
            if event.stage:
                harness.failing_stage = event.stage
        elif isinstance(event, HarnessRequirementFinished):
            harness.status = event.outcome or "fail"
            harness.attempts = event.attempts or harness.attempts
            harness.reason = event.reason
            harness.branch = event.branch or harness.branch
            if harness.status == "pass":
                harness.failing_stage = None

    def _seen_by_harness(self, event: BaseEvent) -> None:
        """An event of the harness run in progress (its agent's included) shows it alive."""
        harness = self.harness
        if harness is not None and event.run_id and event.run_id == harness.run_id:
            harness.seen = event.timestamp or harness.seen


@dataclass
class AuditFold:
    """The project-level log: the harness run in progress (or the last one)."""

    run_id: str | None = None
    missions: list[str] = field(default_factory=list)
    budget: dict[str, object] = field(default_factory=dict)
    started_at: str = ""
    finished: bool = True
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    owner: Owner | None = None  # the runner, as harness.run.started recorded it
    seen: str = ""  # the timestamp of the run's last event in the audit log

    def apply(self, event: BaseEvent) -> None:
        if isinstance(event, HarnessRunStarted):
            self.run_id = event.run_id
            self.missions = list(event.missions)
            self.budget = dict(event.budget)
            self.started_at = self.seen = event.timestamp
            self.owner = event.owner
            self.finished = False
            self.passed = self.failed = self.skipped = 0
            return
        if event.run_id != self.run_id:
            return
        self.seen = event.timestamp or self.seen
        if isinstance(event, HarnessRunFinished):
            self.finished = True
            self.passed, self.failed, self.skipped = event.passed, event.failed, event.skipped
            self.budget.update(event.budget)
        elif isinstance(event, HarnessBudgetChecked):
            self.budget["elapsed_s"] = event.elapsed_s
            self.budget["started"] = event.started
            if event.budget_seconds is not None:
                self.budget["budget_seconds"] = event.budget_seconds
            if event.max_requirements is not None:
                self.budget["max_requirements"] = event.max_requirements
