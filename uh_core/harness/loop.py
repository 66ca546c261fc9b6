"""``harness run``: every selected mission through the loop, one after another.

``prepare`` does every check that can refuse the run (config, agent, git, clean tree,
missions, runtime) before anything is written: a refused run leaves no trace. ``HarnessRun``
then writes ``harness.run.started``/``finished`` to the audit log, the ledger after every
mission and at the end whatever happens, and checks between missions whether it was asked
to stop (a signal, or ``should_stop`` — where budgets plug in).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from uh_core.clock import new_run_id, timestamp
from uh_core.errors import Interrupted
from uh_core.events.writer import EventLog
from uh_core.harness import workspace
from uh_core.harness.agent import AgentSpec, agent_spec
from uh_core.harness.config import Flags, Settings, load_config, require_agent, resolve
from uh_core.harness.ledger import write_ledger
from uh_core.harness.prompt import branch_name
from uh_core.harness.requirement import Deps, Progress, run_requirement
from uh_core.harness.select import Selection, select
from uh_core.layout import Layout
from uh_core.models.events import HarnessRequirementFinished, HarnessRunFinished, HarnessRunStarted
from uh_core.models.ledger import HarnessLedger, RequirementRecord
from uh_core.models.mission import Mission
from uh_core.runtime.run import CancelToken

StopCheck = Callable[[HarnessLedger], str | None]


@dataclass
class Prepared:
    layout: Layout
    settings: Settings
    spec: AgentSpec
    base_commit: str
    selection: Selection


def prepare(layout: Layout, flags: Flags) -> Prepared:
    """Everything that can refuse the run, in the order a user fixes things; writes nothing."""
    settings = resolve(layout, load_config(layout), flags)
    require_agent(settings)
    base = workspace.base_commit(layout)
    workspace.require_clean(layout)
    selection = select(layout, settings.requested)
    spec = agent_spec(layout, settings.agent, settings.runtime)
    return Prepared(layout, settings, spec, base, selection)


def _quiet(_: str) -> None:
    return None


class HarnessRun:
    def __init__(
        self,
        prepared: Prepared,
        token: CancelToken | None = None,
        should_stop: StopCheck | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.prepared = prepared
        self.layout = prepared.layout
        self.token = token or CancelToken()
        self.should_stop = should_stop
        self.run_id = new_run_id("harness")
        self.deps = Deps(
            self.layout, prepared.settings, prepared.spec, prepared.base_commit,
            self.run_id, self.token, progress or _quiet,
        )  # fmt: skip
        self.ledger = HarnessLedger(
            run_id=self.run_id,
            started_at=timestamp(),
            root=str(self.layout.root),
            base_commit=prepared.base_commit,
            settings=prepared.settings.record(),
        )
        self.audit = EventLog(self.layout.audit_log, run_id=self.run_id)
        self.ledger_file: Path | None = None

    def _stop_reason(self) -> str | None:
        if self.token.reason is not None:
            return self.token.reason
        return self.should_stop(self.ledger) if self.should_stop is not None else None

    def _skipped(self, mission: Mission, reason: str) -> RequirementRecord:
        record = RequirementRecord(
            mission_id=mission.id,
            title=mission.display_title,
            branch=branch_name(mission.id),
            outcome="skipped",
            reason=reason,
        )
        EventLog(
            self.layout.mission_events(mission.id), mission_id=mission.id, run_id=self.run_id
        ).emit(HarnessRequirementFinished(branch=record.branch, outcome="skipped", reason=reason))
        return record

    def _keep_current(self, reason: str) -> None:
        """The mission in progress when an exception ended the run goes into the ledger."""
        current = self.deps.current
        if current is not None and current not in self.ledger.requirements:
            if current.finished_at is None:
                current.outcome, current.reason = "fail", current.reason or reason
                current.finished_at = timestamp()
            self.ledger.requirements.append(current)

    def run(self) -> HarnessLedger:
        selection = self.prepared.selection
        self.audit.emit(
            HarnessRunStarted(missions=[m.mission.id for m in selection.missions], budget={})
        )
        try:
            for loaded, reason in selection.skipped:
                self.ledger.requirements.append(self._skipped(loaded.mission, reason))
            for loaded in selection.missions:
                stop = self.ledger.stopped or self._stop_reason()
                if stop is not None:
                    self.ledger.stopped = stop
                    record = self._skipped(loaded.mission, f"the run stopped: {stop}")
                else:
                    record = run_requirement(self.deps, loaded.mission)
                self.ledger.requirements.append(record)
                self.ledger_file = write_ledger(self.layout, self.ledger)
            interrupted = self.token.reason is not None
            self.ledger.status = "interrupted" if interrupted else "completed"
        except (KeyboardInterrupt, Interrupted):
            self.ledger.status, self.ledger.error = "interrupted", "interrupted"
            self._keep_current("interrupted")
            raise
        except BaseException as exc:
            self.ledger.status, self.ledger.error = "error", str(exc) or type(exc).__name__
            self._keep_current(f"the run failed: {self.ledger.error}")
            raise
        finally:
            self.ledger.finished_at = timestamp()
            self.ledger_file = write_ledger(self.layout, self.ledger)
            totals = self.ledger.totals
            self.audit.emit(
                HarnessRunFinished(
                    passed=totals.passed,
                    failed=totals.failed,
                    skipped=totals.skipped,
                    status=self.ledger.status,
                    ledger=self.layout.rel(self.ledger_file),
                )
            )
        return self.ledger


def run_harness(
    layout: Layout,
    flags: Flags,
    token: CancelToken | None = None,
    should_stop: StopCheck | None = None,
    progress: Progress | None = None,
) -> tuple[HarnessLedger, Path]:
    runner = HarnessRun(prepare(layout, flags), token, should_stop, progress)
    ledger = runner.run()
    assert runner.ledger_file is not None
    return ledger, runner.ledger_file
