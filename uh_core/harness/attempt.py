"""One repair round of a mission: the prompt (archived), the agent under the guard, one
snapshot of what it left, and the gate on that snapshot; anything the agent changed in the
operator's repository ends the round as ``tampered``."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from uh_core.adapters.usage import usage_events
from uh_core.clock import timestamp
from uh_core.diff.capture import snapshot_worktree
from uh_core.diff.patch_paths import scan_file
from uh_core.errors import UhError
from uh_core.events.writer import EventLog
from uh_core.fileio import write_text_atomic
from uh_core.git import common_dir
from uh_core.harness.agent import AgentOutcome, finished_event, run_agent
from uh_core.harness.costs import attempt_cost
from uh_core.harness.deps import Deps
from uh_core.harness.gate import run_gate
from uh_core.harness.progress import judge_of
from uh_core.harness.prompt import Feedback, archive_prompt, bounded, branch_name, build_prompt
from uh_core.harness.reap import reap_in
from uh_core.harness.stages.agent import HarnessGateContext
from uh_core.isolation.bwrap import Resolved
from uh_core.judge.scan import review_lines
from uh_core.judge.stages.write_scope import STORE_CODE
from uh_core.judge.stream import CODE as EVIDENCE_TAMPERED
from uh_core.layout import Layout
from uh_core.models.events import (
    HarnessAttemptFinished,
    HarnessAttemptStarted,
    HarnessGateChecked,
    SecurityTampered,
)
from uh_core.models.ledger import AttemptRecord, HandoverAnswer, StageResult
from uh_core.models.mission import Mission
from uh_core.runtime.steering import Steering, with_steering
from uh_core.security.guard import AgentGuard, EngineWrites, GuardReport
from uh_core.security.guard import resolve as resolve_isolation
from uh_core.shown import plural


def evidence_dir(records: Layout, mission_id: str, run_id: str, attempt: int) -> Path:
    # In the operator's .harness/sandboxes/<sbx>/missions/<id>/runs/: never in the sandbox.
    return records.mission_dir(mission_id) / "runs" / run_id / f"attempt-{attempt}"


def _judge(
    deps: Deps,
    mission: Mission,
    records: Layout,
    evidence: Path,
    agent: AgentOutcome,
    record: AttemptRecord,
    log: EventLog,
    isolation: Resolved,
) -> None:
    """Snapshot what the agent left (one tree, by content), then run the gate on it."""
    patch = evidence / "diff.patch"
    git_dir = common_dir(deps.layout.root)
    judged = snapshot_worktree(records.root, deps.base_commit, git_dir=git_dir, patch_out=patch)
    touched = scan_file(patch).paths
    record.files_changed, record.tree, record.diff_hash = touched, judged.tree, judged.diff_hash
    _agent_finished(log, agent, touched, judged.diff_hash)  # before the gate's stages
    ctx = HarnessGateContext(
        deps.layout, records, mission, deps.settings, records.root, branch_name(mission.id),
        deps.base_commit, deps.run_id, record.attempt, evidence, patch, touched,
        git_dir, judged.tree, isolation, agent,
    )  # fmt: skip

    def on_stage(result: StageResult) -> None:
        checked = HarnessGateChecked(
            attempt=record.attempt, stage=result.stage, passed=result.passed, detail=result.detail
        )
        log.emit(checked)

    record.stages = run_gate(ctx, on_stage)
    failing = next((s for s in record.stages if not s.passed), None)
    record.timed_out = agent.record.timed_out
    if failing is None:
        record.outcome, record.verdict = "pass", "green: every stage passed"
        if record.timed_out:
            record.verdict += " (the agent was stopped at its deadline; its tree was judged)"
    else:
        record.outcome, record.stage = "fail", failing.stage
        record.failure_output = bounded(failing.output or failing.detail)
        record.verdict = f"red at {failing.stage}: {failing.detail}"
    record.review = review_lines(patch)  # shapes of judge tampering: a green needs review
    # The evidence disagreed with itself (exit status, results stream, report): forged by
    # the code under test — tampered, as a change to the operator's repository is.
    record.tampered = [
        f"evidence: {finding.message}"
        for stage in record.stages
        for finding in stage.findings
        if finding.code == EVIDENCE_TAMPERED
    ]
    # the operator's object store rewritten in place (an unconfined agent): a change to the
    # operator's repository, as any other is
    record.tampered += [
        f"object store: {finding.message} does not hash to its name (rewritten in place)"
        for stage in record.stages
        for finding in stage.findings
        if finding.code == STORE_CODE
    ]


def _agent_finished(
    log: EventLog, agent: AgentOutcome, touched: list[str] | None, diff_hash: str | None = None
) -> None:
    """``runtime.finished``, once: with the diff when it is known (``no_change`` as in the
    ledger's agent stage), else as the agent ended."""
    event = finished_event(agent, touched, diff_hash)
    agent.finished = None
    if event is not None:
        log.emit(event)


def attempt(
    deps: Deps,
    mission: Mission,
    records: Layout,
    sandbox_id: str,
    n: int,
    feedback: Feedback | None,
    log: EventLog,
    answers: list[HandoverAnswer] | None = None,
    steering: Steering | None = None,
) -> AttemptRecord:
    """One repair round: prompt (archived), agent, gate. Never raises for a failing round;
    an engine problem (git, disk) is an ``error`` outcome, which ends the mission's rounds."""
    record = AttemptRecord(attempt=n, started_at=timestamp())
    record.judge = judge_of(mission, deps.settings)  # same case, same judge, every round
    # steering sent while no agent ran (the gate, between rounds): this round's prompt has it
    steers = steering.take() if steering is not None else []
    text = build_prompt(mission, deps.settings, feedback, answers)
    if steers:
        text = with_steering(text, steers)
    engine = deps.engine or EngineWrites()
    with engine.writing():
        archived = archive_prompt(deps.layout, mission.id, n, text)
        engine.file(deps.layout.root, archived, text.encode("utf-8"))
    record.prompt_file = deps.layout.rel(archived)
    evidence = evidence_dir(records, mission.id, deps.run_id, n)
    outbox = evidence / "agent"
    prompt_file = outbox / "prompt.md"
    write_text_atomic(prompt_file, text)
    if deps.profile is not None:
        record.profile = deps.profile.name
        record.cost_per_run_hint = deps.profile.cost_per_run_hint
    log.emit(HarnessAttemptStarted(attempt=n, profile=record.profile))
    said = (
        steering.record(log, steers, f"in the prompt of attempt {n}", attempt=n)
        if steers and steering is not None
        else []
    )
    deps.where(mission.id, n, sandbox_id)  # before the guard's snapshot: it may change
    of = deps.settings.max_attempts  # after an answer, rounds are numbered after the last:
    count = f"{n}/{of}" if not answers else f"{n} (after the answer: up to {plural(of, 'round')})"
    deps.progress(f"{mission.id}: attempt {count} ({deps.spec.name})")
    isolation = deps.isolation or resolve_isolation(None)
    reap = partial(reap_in, records.root) if deps.side_by_side else None
    guard = AgentGuard(deps.layout, isolation, {sandbox_id}, deps.engine, reap)
    try:
        guard.start()
    except UhError as exc:
        record.outcome = "error"
        record.verdict = f"the repository could not be snapshotted: {exc.one_line()}"
        record.finished_at = timestamp()
        log.emit(HarnessAttemptFinished(attempt=n, outcome=record.outcome, stage=None))
        return record
    record.isolation, record.isolation_note = guard.isolation.mode, guard.isolation.note
    agent = run_agent(
        deps.spec, mission, records.root, outbox, prompt_file, sandbox_id,
        deps.settings.timeout_s, deps.token, log, guard, steering, n,
    )  # fmt: skip
    agent.record.steered[:0] = said
    record.survivors = guard.survivors()
    for key in ("stdout_log", "stderr_log"):  # shown relative to the root, like every path
        value = getattr(agent.record, key)
        if value:
            setattr(agent.record, key, deps.layout.rel(Path(value)))
    record.agent, record.final_message = agent.record, agent.final_message
    record.usage = agent.usage
    record.cost_usd, record.cost_note = attempt_cost(agent.usage, deps.settings.pricing)
    for event in usage_events(deps.spec.name, agent.usage, n):
        log.emit(event)
    if deps.token.reason is not None:
        record.outcome, record.verdict = "interrupted", f"stopped: {deps.token.reason}"
    else:
        try:
            _judge(deps, mission, records, evidence, agent, record, log, guard.isolation)
        except UhError as exc:
            record.outcome, record.verdict = "error", f"the gate could not run: {exc.one_line()}"
    _agent_finished(log, agent, None)  # not emitted yet: interrupted, or no snapshot
    _guarded(deps, mission, guard, record, log)
    if agent.record.rate_limited and record.outcome == "fail":
        # the provider refused it: not the agent's failure, not charged (harness/parking.py)
        why = next((p for p in agent.problems if p.startswith("rate limited")), "rate limited")
        record.outcome, record.stage = "rate_limited", None
        record.retry_after_s = agent.record.retry_after_s
        record.verdict = f"{why} (not charged)"
        if not record.usage:  # refused before it reported anything: a refusal is not billed
            record.cost_usd, record.cost_note = 0.0, None
    record.finished_at = timestamp()
    log.emit(HarnessAttemptFinished(attempt=n, outcome=record.outcome, stage=record.stage))
    deps.progress(f"{mission.id}: attempt {n} {record.verdict}")
    return record


def _guarded(
    deps: Deps, mission: Mission, guard: AgentGuard, record: AttemptRecord, log: EventLog
) -> None:
    """After the agent and the gate (whose checks ran the agent's code): what was left
    running is stopped, and any change to the operator's repository ends the attempt as
    ``tampered`` and stops the run — nothing is repaired."""
    try:
        report = guard.finish()
    except UhError as exc:
        report = GuardReport(guard.isolation.mode, guard.isolation.note)
        report.tampered = [f"the repository could not be compared: {exc.one_line()}"]
    left = [s for s in report.survivors if s not in record.survivors]
    record.survivors += left
    if left and record.outcome == "pass":  # nothing outlives the judge, or it is not green
        shown = "; ".join(left[:5]) + (" …" if len(left) > 5 else "")
        record.outcome, record.stage = "fail", "survivors"
        record.verdict = f"red: {len(left)} process(es) were left running after the gate: {shown}"
        record.failure_output = bounded(record.verdict)
    if report.clean and not record.tampered:
        return
    report.tampered = [*record.tampered, *report.tampered]
    record.tampered = report.tampered
    record.outcome, record.stage = "tampered", None
    shown = "; ".join(report.tampered[:5]) + (" …" if len(report.tampered) > 5 else "")
    what = (
        "the evidence or the operator's repository"
        if record.stages
        else "the operator's repository"
    )
    record.verdict = f"TAMPERED: {what} changed during the attempt: {shown}"
    log.emit(SecurityTampered(attempt=record.attempt, changes=report.tampered[:100]))
    deps.token.cancel(f"tampered: {mission.id} changed the operator's repository")
