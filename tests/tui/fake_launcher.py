"""A launcher that records each ``uh-core`` argv and writes the events the real command
would, so a test sees the dashboard update the way it would in use (through the log)."""

from __future__ import annotations

import threading
from pathlib import Path

from uh_core.events.writer import EventLog
from uh_core.fileio import write_json, write_yaml
from uh_core.layout import Layout
from uh_core.models.events import (
    AcceptanceChecked,
    AcceptanceStarted,
    HarnessAttemptFinished,
    HarnessHandoverAnswered,
    HarnessRequirementFinished,
    HarnessRequirementStarted,
    HarnessRunFinished,
    HarnessRunStarted,
    RuntimeCancelled,
    RuntimeFinished,
    RuntimeProgress,
    RuntimeStarted,
    SteeringMessage,
    VerificationFinished,
    VerificationStarted,
)
from uh_core.models.ledger import HarnessLedger, RequirementRecord, Totals
from uh_core.sandbox.index import read_index
from uh_tui.launch import Launch, LaunchResult


class FakeLauncher:
    def __init__(self, root: Path) -> None:
        self.layout = Layout(root)
        self.launches: list[Launch] = []
        self.fail: dict[str, str] = {}  # action → stderr line: that launch exits 2
        self.stdout: dict[str, str] = {}  # action → what it prints
        self.hold: set[str] = set()  # actions that run until released (or ``finish`` set)
        self.finish = threading.Event()
        self.released: str | None = None  # "cancel" | "leave": how the app let go
        self._released = threading.Event()
        self.done = threading.Event()

    @property
    def argvs(self) -> list[list[str]]:
        return [list(item.argv) for item in self.launches]

    def launch(self, launch: Launch) -> LaunchResult:
        self.launches.append(launch)
        try:
            if launch.action in self.fail:
                error = self.fail[launch.action]
                return LaunchResult(launch, 2, f"{error} (exit 2)", stderr=error + "\n")
            getattr(self, "_" + launch.action.replace("-", "_"))(launch)
            if launch.action in self.hold:
                while not (self.finish.is_set() or self._released.wait(0.02)):
                    pass
                if self.released == "leave":
                    return LaunchResult(launch, None, None, "left running", detached=True)
                if self.released == "cancel":
                    return LaunchResult(launch, 130, None, "interrupted", stderr="interrupted\n")
            out = self.stdout.get(launch.action, "")
            return LaunchResult(launch, 0, None, out.strip().rsplit("\n", 1)[-1], stdout=out)
        finally:
            self.done.set()

    def release(self, *, cancel: bool) -> None:
        if self.released is None:  # the first answer counts (the app lets go again at exit)
            self.released = "cancel" if cancel else "leave"
        self._released.set()

    def _log(self, mission_id: str, run_id: str) -> EventLog:
        return EventLog(
            self.layout.mission_events(mission_id), mission_id=mission_id, run_id=run_id
        )

    def _verify(self, launch: Launch) -> None:
        log = self._log(launch.target, "verify-fake-1")
        log.emit(VerificationStarted(total_acceptance=1, timestamp="2026-01-15T12:00:01.000Z"))
        log.emit(
            AcceptanceStarted(
                ac_id="unit-tests", index=0, total=1, timestamp="2026-01-15T12:00:01.100Z"
            )
        )
        log.emit(
            AcceptanceChecked(
                ac_id="unit-tests",
                status="passed",
                exit_code=0,
                duration_ms=42,
                timestamp="2026-01-15T12:00:01.200Z",
            )
        )
        log.emit(VerificationFinished(status="passed", timestamp="2026-01-15T12:00:01.300Z"))

    def _run(self, launch: Launch) -> None:
        runtime = launch.argv[launch.argv.index("--runtime") + 1]
        sandbox = f"sbx-{launch.target}-{runtime}-fake"
        log = self._log(launch.target, sandbox)
        log.emit(
            RuntimeStarted(
                runtime=runtime, sandbox_id=sandbox, timestamp="2026-01-15T12:00:01.000Z"
            )
        )
        log.emit(
            RuntimeProgress(
                runtime=runtime, message="fake agent at work", timestamp="2026-01-15T12:00:01.100Z"
            )
        )

    def _run_all(self, launch: Launch) -> None:
        for runtime in ("zeta", "eta"):
            log = self._log(launch.target, f"sbx-{launch.target}-{runtime}-fake")
            log.emit(RuntimeStarted(runtime=runtime, timestamp="2026-01-15T12:00:01.000Z"))

    def _harness(self, launch: Launch) -> None:
        run_id = "harness-fake-1"
        audit = EventLog(self.layout.audit_log, run_id=run_id)
        audit.emit(
            HarnessRunStarted(missions=["add-subtract"], timestamp="2026-01-15T12:00:01.000Z")
        )
        log = self._log("add-subtract", run_id)
        log.emit(
            HarnessRequirementStarted(
                branch="harness/add-subtract", timestamp="2026-01-15T12:00:01.100Z"
            )
        )
        log.emit(
            HarnessRequirementFinished(
                branch="harness/add-subtract",
                outcome="pass",
                attempts=1,
                timestamp="2026-01-15T12:00:02.000Z",
            )
        )
        ledger = HarnessLedger(
            run_id=run_id,
            status="completed",
            started_at="2026-01-15T12:00:01.000Z",
            root=str(self.layout.root),
            requirements=[
                RequirementRecord(
                    mission_id="add-subtract",
                    outcome="pass",
                    branch="harness/add-subtract",
                    duration_ms=900,
                )
            ],
            totals=Totals(missions=1, passed=1),
        )
        write_json(self.layout.ledgers_dir / f"{run_id}.json", ledger.model_dump(mode="json"))
        audit.emit(HarnessRunFinished(passed=1, timestamp="2026-01-15T12:00:02.100Z"))

    def _cancel(self, launch: Launch) -> None:
        sandbox = "sbx-divide-epsilon-20260115115900"
        log = self._log(launch.target, sandbox)
        log.emit(
            RuntimeCancelled(
                runtime="epsilon",
                reason="cancelled by the operator",
                timestamp="2026-01-15T12:00:01.000Z",
            )
        )
        log.emit(
            RuntimeFinished(
                runtime="epsilon", status="cancelled", timestamp="2026-01-15T12:00:01.100Z"
            )
        )

    def _harness_cancel(self, launch: Launch) -> None:
        """What ``uh-core harness cancel`` leads to in the fixture's run in progress
        (changelog, attempt 2): the attempt interrupted, the requirement and the run over."""
        run_id = launch.target
        log = self._log("changelog", run_id)
        log.emit(
            HarnessAttemptFinished(
                attempt=2, outcome="cancelled", timestamp="2026-01-15T12:00:01.000Z"
            )
        )
        log.emit(
            HarnessRequirementFinished(
                branch="harness/changelog",
                outcome="fail",
                attempts=2,
                reason="cancelled: by the operator",
                timestamp="2026-01-15T12:00:01.100Z",
            )
        )
        audit = EventLog(self.layout.audit_log, run_id=run_id)
        audit.emit(
            HarnessRunFinished(failed=1, stopped="cancelled", timestamp="2026-01-15T12:00:01.200Z")
        )

    def _answer(self, launch: Launch) -> None:
        """What ``harness answer ID TEXT`` writes: one event in the mission's log."""
        text = launch.argv[launch.argv.index(launch.target) + 1]
        EventLog(self.layout.mission_events(launch.target), mission_id=launch.target).emit(
            HarnessHandoverAnswered(answer=text, by="ana", timestamp="2026-01-15T12:00:02.000Z")
        )

    def _steer(self, launch: Launch) -> None:
        """What ``mission steer ID TEXT`` writes: one event in the mission's log."""
        text = launch.argv[launch.argv.index(launch.target) + 1]
        EventLog(self.layout.mission_events(launch.target), mission_id=launch.target).emit(
            SteeringMessage(message=text, by="ana", timestamp="2026-01-15T12:00:02.000Z")
        )

    def _discard(self, launch: Launch) -> None:
        index = read_index(self.layout)
        index.sandboxes = [s for s in index.sandboxes if s.id != launch.target]
        write_yaml(self.layout.sandbox_index, index.model_dump(mode="json", exclude_none=True))
