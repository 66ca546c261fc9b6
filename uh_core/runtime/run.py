"""``mission run``: sandbox → prompt → launch → live observe → collect → evidence.

Events go to the mission's log in the main checkout (``runtime.started``,
``runtime.progress``, ``runtime.usage``, ``runtime.cancelled``, ``runtime.finished``).
What the agent writes besides its work (prompt.md, its logs, its CLI's side files) is in
``.harness/sandboxes/<sbx>/agent/``; what uh records (runtime-session.yaml, diff.patch,
runtime-final.txt) in ``.harness/sandboxes/<sbx>/missions/<id>/``, where the agent cannot
write under isolation. The main checkout is untouched.
A runtime error (binary missing, crash, timeout) is a runtime status; whether the work
verifies is a separate question for ``verify``.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from uh_core.adapters.agentenv import project_allow_list
from uh_core.adapters.base import Adapter, LaunchContext, LaunchPlan, Session, as_unconfined
from uh_core.adapters.manifests import missing_capabilities
from uh_core.adapters.registry import make_adapter
from uh_core.adapters.usage import UsageMeter, token_usages, usage_events
from uh_core.clock import timestamp
from uh_core.errors import UhError, UsageError
from uh_core.events.writer import EventLog
from uh_core.fileio import write_text_atomic, write_yaml
from uh_core.git import common_dir
from uh_core.layout import Layout
from uh_core.models.adapter import AdapterManifest
from uh_core.models.events import (
    Owner,
    RuntimeCancelled,
    RuntimeFinished,
    RuntimeProgress,
    RuntimeStarted,
    SecurityTampered,
)
from uh_core.models.mission import Mission
from uh_core.models.runtime import RuntimeResult
from uh_core.models.sandbox import SandboxEntry
from uh_core.runtime import active
from uh_core.runtime.prompt import mission_prompt
from uh_core.runtime.steering import Steering, Turns, continue_steered
from uh_core.sandbox.worktree import create_sandbox, entry_path, sandbox_records
from uh_core.security.guard import AgentGuard
from uh_core.security.guard import resolve as resolve_isolation
from uh_core.shown import clip

# ``no_change``: the agent ended well (exit 0, no reported error) but its diff is empty — never
# ``succeeded``, whatever its final message claims (docs/adapters.md, "Outcomes").
Outcome = Literal[
    "succeeded", "no_change", "failed", "blocked", "cancelled", "error", "rate_limited"
]
NO_CHANGE = "the agent ended without an error but changed nothing"
_STATUS: dict[str, Outcome] = {
    "completed": "succeeded",
    "failed": "failed",
    "cancelled": "cancelled",
    "blocked": "blocked",
    "rate_limited": "rate_limited",
}
_MESSAGE_LIMIT = 500
# of the final message carried on runtime.finished (the result file holds it whole)
FINAL_CHARS = 2000


@dataclass
class CancelToken:
    """Set by a signal handler or another thread; the run loop polls it."""

    reason: str | None = None

    def cancel(self, reason: str) -> None:
        self.reason = self.reason or reason


@dataclass
class RunOptions:
    force: bool = False
    timeout_s: float | None = None
    base: str = "HEAD"
    poll_s: float = 0.1
    isolation: str | None = None  # auto (None) | bwrap | none
    # run-all: every sandbox of the run (the guards leave each other's records alone) and
    # the survivors reaped once, after every runtime has ended
    own: set[str] | None = None
    reap_each: bool = True


@dataclass
class RunOutcome:
    mission_id: str
    runtime: str
    status: Outcome
    exit_code: int | None = None
    signal: int | None = None  # the signal that ended the agent (exit_code is then None)
    duration_ms: int = 0
    sandbox: SandboxEntry | None = None
    diff_hash: str | None = None
    touched_paths: list[str] = field(default_factory=list)
    final_message: str = ""
    error: str | None = None
    result_file: str | None = None
    isolation: str | None = None  # "bwrap" | "none"
    isolation_note: str | None = None  # why it ran unconfined
    survivors: list[str] = field(default_factory=list)
    tampered: list[str] = field(default_factory=list)
    # the tokens its CLI reported, per model (``TokenUsage`` as JSON: it travels to Ray)
    usage: list[dict[str, Any]] = field(default_factory=list)
    retry_after_s: float | None = None  # rate_limited: when the provider's limit lifts


def check_capabilities(mission: Mission, manifest: AdapterManifest, force: bool) -> list[str]:
    """Missing capabilities; refused (exit 2) unless ``force``. Missions without any pass."""
    missing = missing_capabilities(mission.capability_ids, manifest)
    if missing and not force:
        raise UsageError(
            f"runtime {manifest.id!r} lacks capabilities mission {mission.id!r} requires: "
            f"{', '.join(missing)}",
            fix="choose another runtime, declare them in its manifest, or pass --force",
        )
    return missing


def agent_dir(layout: Layout, sandbox_id: str) -> Path:
    """The agent's own output folder (prompt, logs, its CLI's side files): writable by it."""
    return layout.sandbox_evidence(sandbox_id) / "agent"


def dry_run(
    layout: Layout, mission: Mission, manifest: AdapterManifest, isolation: str | None = None
) -> tuple[LaunchPlan, str]:
    """The launch plan and exact prompt, with the sandbox path it would use (its timestamp
    left as ``TIMESTAMP``) and the isolation a run would resolve; creates nothing."""
    adapter = make_adapter(manifest, project_allow_list(layout))
    sandbox_id = f"sbx-{mission.id}-{manifest.id}-TIMESTAMP"
    worktree = layout.sandbox_trees / sandbox_id
    artifacts = agent_dir(layout, sandbox_id)
    try:
        mode = resolve_isolation(isolation).mode
    except UhError:
        mode = "none"  # a run would refuse; the plan still shows
    ctx = LaunchContext(
        mission,
        manifest,
        worktree,
        artifacts,
        artifacts / "prompt.md",
        isolation=mode,
        files_root=layout.root,
    )
    return adapter.prepare(ctx), mission_prompt(mission)


def diff_summary(
    layout: Layout, worktree: Path, patch: Path, base_commit: str
) -> tuple[str, list[str], int]:
    """Capture the sandbox's diff against its base, judged with the operator's git
    directory (never the sandbox's own): (hash, touched paths, files)."""
    from uh_core.diff.capture import capture_diff
    from uh_core.diff.classify import classify_patch_file

    capture_diff(worktree, patch, base_commit, git_dir=common_dir(layout.root))
    digest = hashlib.sha256()
    with open(patch, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    found = classify_patch_file(patch)
    paths = sorted({*found.tests, *found.source, *found.other})
    return digest.hexdigest()[:16], paths, len(paths)


class MissionRun:
    def __init__(
        self,
        layout: Layout,
        mission: Mission,
        manifest: AdapterManifest,
        options: RunOptions,
        token: CancelToken,
    ) -> None:
        self.layout = layout
        self.mission = mission
        self.manifest = manifest
        self.placed_as = manifest.id  # the runtime a cluster places it as (a repeat: its own)
        self.options = options
        self.token = token
        self.log = EventLog(layout.mission_events(mission.id), mission_id=mission.id)
        self.started = time.monotonic()
        self.isolation = resolve_isolation(options.isolation)  # bwrap that cannot work: refused

    def _finish_event(self, outcome: RunOutcome, files: int = 0) -> RunOutcome:
        outcome.duration_ms = int((time.monotonic() - self.started) * 1000)
        finished = RuntimeFinished(
            runtime=self.manifest.id,
            status=outcome.status,
            exit_code=outcome.exit_code,
            duration_ms=outcome.duration_ms,
            diff_hash=outcome.diff_hash,
            files_changed=files,
            reason=outcome.error,
            retry_after_s=outcome.retry_after_s,
            final_message=clip(outcome.final_message.strip(), FINAL_CHARS),
        )
        self.log.emit(finished)
        return outcome

    def preflight(self, *, here: bool = True) -> Adapter | RunOutcome:
        """The adapter, or the outcome that says why this runtime cannot run here.

        A bad manifest or a capability the runtime lacks raises (bad input, exit 2).
        ``here=False``: the runtime runs on another node, which checks it is installed.
        """
        check_capabilities(self.mission, self.manifest, self.options.force)
        adapter = make_adapter(self.manifest, project_allow_list(self.layout))
        dry_run(self.layout, self.mission, self.manifest)  # a bad manifest fails before any work
        if not here:
            return adapter
        available = adapter.check()
        if available.ok:
            return adapter
        outcome = RunOutcome(self.mission.id, self.manifest.id, "blocked")
        outcome.error = f"runtime {self.manifest.id!r} cannot run here: {available.reason}"
        return self._finish_event(outcome)

    def make_sandbox(self, base: str) -> SandboxEntry | RunOutcome:
        try:
            return create_sandbox(self.layout, self.mission.id, self.manifest.id, base=base)
        except UhError as exc:
            outcome = RunOutcome(self.mission.id, self.manifest.id, "error", error=exc.one_line())
            return self._finish_event(outcome)

    def execute(self, adapter: Adapter, sandbox: SandboxEntry) -> RunOutcome:
        self.started = time.monotonic()
        self.log.run_id = sandbox.id
        outcome = RunOutcome(self.mission.id, self.manifest.id, "error", sandbox=sandbox)
        return self._run_in(adapter, sandbox, outcome)

    def run(self) -> RunOutcome:
        adapter = self.preflight()
        if isinstance(adapter, RunOutcome):
            return adapter
        sandbox = self.make_sandbox(self.options.base)
        if isinstance(sandbox, RunOutcome):
            return sandbox
        return self.execute(adapter, sandbox)

    def _run_in(self, adapter: Adapter, sandbox: SandboxEntry, outcome: RunOutcome) -> RunOutcome:
        worktree = entry_path(self.layout, sandbox)
        artifacts = agent_dir(self.layout, sandbox.id)
        prompt_file = artifacts / "prompt.md"
        write_text_atomic(prompt_file, mission_prompt(self.mission))
        own = self.options.own if self.options.own is not None else set()
        guard = AgentGuard(self.layout, self.isolation, own | {sandbox.id})
        ctx = LaunchContext(
            self.mission,
            self.manifest,
            worktree,
            artifacts,
            prompt_file,
            sandbox.id,
            self.options.timeout_s,
            isolation=self.isolation.mode,
            isolation_note=self.isolation.note,
            readable=[Path(p) for p in guard.readable()],
        )
        run = active.ActiveRun(
            self.mission.id, self.manifest.id, sandbox.id, os.getpid(), 0, timestamp(),
            active.start_time(os.getpid()),
        )  # fmt: skip
        registration = active.register(self.layout, run)  # cancellable from here on
        steering = Steering(self.log.path, sandbox.id, self.manifest.id)  # mission steer's
        try:
            try:
                guard.start()
                plan = adapter.prepare(ctx)
                session = adapter.launch(plan)
            except UhError as exc:
                outcome.status, outcome.error = "error", exc.one_line()
                return self._finish_event(outcome)

            def turn(plan: LaunchPlan, session: Session) -> tuple[RuntimeResult, str]:
                run.agent_pgid = session.process.pid  # `mission cancel` stops this one now
                active.register(self.layout, run)
                self.log.emit(
                    RuntimeStarted(
                        runtime=self.manifest.id,
                        sandbox_id=sandbox.id,
                        command=plan.display,
                        owner=Owner.here(),  # this runner: a killed run reads interrupted
                    )
                )
                try:
                    self._watch(adapter, session)
                    return adapter.collect(session)
                finally:
                    adapter.close(session)

            result, final = turn(plan, session)
            turns = continue_steered(
                adapter, ctx, (plan, session, result, final), steering, self.log, turn,
                lambda: self.token.reason is not None,
            )  # fmt: skip
        finally:
            active.unregister(registration)
        left = steering.take()
        if left:  # sent after its last turn ended: said, never silently dropped
            steering.record(self.log, left, "not delivered: the run had ended", delivered=False)
        self._guarded(guard, turns.result, outcome)
        return self._record(sandbox, worktree, turns, outcome)

    def _guarded(self, guard: AgentGuard, result: RuntimeResult, outcome: RunOutcome) -> None:
        """What the agent left running is stopped (now, or by run-all once every runtime
        has ended); a change to the operator's repository makes the run ``failed`` with
        each change named, and is shown loudly — never repaired."""
        outcome.isolation, outcome.isolation_note = guard.isolation.mode, guard.isolation.note
        result.isolation, result.isolation_note = outcome.isolation, outcome.isolation_note
        try:
            if self.options.reap_each:
                outcome.survivors = guard.survivors()
            report = guard.finish(reap=False)
            tampered = report.tampered
        except UhError as exc:
            tampered = [f"the repository could not be compared: {exc.one_line()}"]
        result.survivors = outcome.survivors
        if not tampered:
            return
        outcome.tampered = result.tampered = tampered
        result.status = "failed"
        result.blockers.insert(0, "TAMPERED: " + "; ".join(tampered[:5]))
        self.log.emit(SecurityTampered(runtime=self.manifest.id, changes=tampered[:100]))

    def _emit_progress(self, adapter: Adapter, session: Session) -> None:
        for event in adapter.observe(session):
            self.log.emit(
                RuntimeProgress(
                    runtime=self.manifest.id,
                    kind=event.kind,
                    message=event.message[:_MESSAGE_LIMIT],
                )
            )

    def _watch(self, adapter: Adapter, session: Session) -> None:
        deadline = (self.started + self.options.timeout_s) if self.options.timeout_s else None
        while True:
            self._emit_progress(adapter, session)
            if self.token.reason is not None:
                adapter.cancel(session, self.token.reason)
                self.log.emit(RuntimeCancelled(runtime=self.manifest.id, reason=self.token.reason))
                break
            if deadline is not None and time.monotonic() >= deadline:
                session.process.stop((signal.SIGTERM,), timed_out=True)
                break
            if adapter.wait(session, self.options.poll_s) is not None:
                break
        self._emit_progress(adapter, session)  # the last lines written before it ended

    def _record(
        self, sandbox: SandboxEntry, worktree: Path, turns: Turns, outcome: RunOutcome
    ) -> RunOutcome:
        plan, session, result, final = turns.plan, turns.session, turns.result, turns.final
        records = sandbox_records(self.layout, sandbox)
        patch = records.diff_file(self.mission.id)
        captured = True
        try:
            outcome.diff_hash, outcome.touched_paths, files = diff_summary(
                self.layout, worktree, patch, sandbox.base_commit
            )
        except UhError as exc:
            result.blockers.append(f"diff capture failed: {exc.one_line()}")
            files, captured = 0, False
        result.changes.diff_ref = self.layout.rel(patch)
        result.changes.files_changed = outcome.touched_paths
        result.sandbox_id, result.base_commit = sandbox.id, sandbox.base_commit
        result.diff_hash, result.command = outcome.diff_hash, plan.display
        meter = UsageMeter(configured_model=session.parser.meter.configured_model)
        for each in turns.sessions:  # a steered run's turns add up
            for counted in each.parser.meter.per_model():
                meter.add(counted)
        usage = meter.total()
        if usage is not None:
            models = token_usages(meter)
            result.usage = {
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "cache_read_tokens": usage.cache_read_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
                "cost_usd": usage.cost_usd,  # the CLI's own figure
                "models": [m.model_dump(mode="json") for m in models],
            }
            for event in usage_events(self.manifest.id, models):
                self.log.emit(event)
            outcome.usage = result.usage["models"]
        final_file = records.mission_dir(self.mission.id) / "runtime-final.txt"
        write_text_atomic(final_file, final + ("\n" if final else ""))
        session_file = records.session_file(self.mission.id)
        write_yaml(session_file, result.model_dump(mode="json"))
        outcome.status = _STATUS[result.status]
        if outcome.status == "succeeded" and captured and not outcome.touched_paths and not files:
            outcome.status = "no_change"
            result.blockers.append(NO_CHANGE)
            write_yaml(session_file, result.model_dump(mode="json"))
        outcome.exit_code = result.exit_code
        outcome.retry_after_s = result.retry_after_s
        ended = as_unconfined(session.plan, session.process.wait(0))
        outcome.signal = ended.signal if ended is not None else None
        outcome.final_message = final
        outcome.result_file = self.layout.rel(session_file)
        if result.blockers and outcome.status != "succeeded":
            outcome.error = "; ".join(result.blockers)
        return self._finish_event(outcome, files)


def run_mission(
    layout: Layout,
    mission: Mission,
    manifest: AdapterManifest,
    options: RunOptions,
    token: CancelToken | None = None,
) -> RunOutcome:
    return MissionRun(layout, mission, manifest, options, token or CancelToken()).run()
