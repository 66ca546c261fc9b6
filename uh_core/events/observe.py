"""The fold: events in, a typed snapshot of what is happening out.

``uh-core mission list``, ``uh-core tail`` and every dashboard view read state through
here, so nothing has a private understanding of the files. Applying an event is cheap
and order-preserving; unknown events only bump counters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from uh_core.events.reader import LogTail
from uh_core.models.events import (
    AcceptanceChecked,
    AcceptanceStarted,
    BaseEvent,
    CheckChecked,
    Owner,
    VerificationFinished,
    VerificationStarted,
)


@dataclass
class CriterionState:
    ac_id: str
    status: str = "pending"  # pending | running | passed | failed | blocked | unobserved
    severity: str = "block"
    exit_code: int | None = None
    duration_ms: int = 0
    timed_out: bool = False
    synthetic: bool = False
    flaky: bool = False


@dataclass
class MissionState:
    mission_id: str
    verify_run_id: str | None = None
    verify_status: str | None = None  # running | passed | failed | blocked
    total_acceptance: int = 0
    criteria: dict[str, CriterionState] = field(default_factory=dict)
    checks: dict[str, str] = field(default_factory=dict)
    last_event: str | None = None
    last_timestamp: str | None = None
    events: int = 0
    verify_owner: Owner | None = None  # the process running the latest verify, if recorded
    verify_seen: str = ""  # the timestamp of that verify's last event

    @property
    def running(self) -> bool:
        return self.verify_status == "running"

    def apply(self, event: BaseEvent) -> None:
        self.events += 1
        self.last_event = event.event
        self.last_timestamp = event.timestamp or self.last_timestamp
        if isinstance(event, VerificationStarted):
            self.verify_run_id = event.run_id
            self.verify_owner = event.owner
            self.verify_seen = event.timestamp
            self.verify_status = "running"
            self.total_acceptance = event.total_acceptance
            self.criteria = {}
            self.checks = {}
        elif event.run_id is not None and event.run_id != self.verify_run_id:
            return  # a straggler from an older run
        else:
            self._verify_event(event)

    def _verify_event(self, event: BaseEvent) -> None:
        if event.run_id is not None and event.timestamp:
            self.verify_seen = event.timestamp
        if isinstance(event, CheckChecked):
            self.checks[event.name] = event.status
        elif isinstance(event, AcceptanceStarted):
            self.criteria.setdefault(event.ac_id, CriterionState(event.ac_id)).status = "running"
        elif isinstance(event, AcceptanceChecked):
            state = self.criteria.setdefault(event.ac_id, CriterionState(event.ac_id))
            state.status = event.status
            state.severity = event.severity
            state.exit_code = event.exit_code
            state.duration_ms = event.duration_ms
            state.timed_out = event.timed_out
            state.synthetic = event.synthetic
            state.flaky = event.flaky
        elif isinstance(event, VerificationFinished):
            self.verify_status = event.status


@dataclass
class MissionObserver:
    """Tails one mission log and folds it into a ``MissionState``."""

    mission_id: str
    path: Path
    state: MissionState = field(init=False)
    tail: LogTail = field(init=False)

    def __post_init__(self) -> None:
        self.state = MissionState(self.mission_id)
        self.tail = LogTail(self.path)

    def poll(self) -> list[BaseEvent]:
        resets = self.tail.resets
        events = self.tail.poll()
        if self.tail.resets != resets:
            self.state = MissionState(self.mission_id)  # file replaced: fold again
        for event in events:
            self.state.apply(event)
        return events

    @property
    def malformed(self) -> int:
        return self.tail.malformed
