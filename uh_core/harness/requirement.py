"""One mission through the loop: its branch and worktree, attempts until green or the last
one, and on green the one commit the harness makes (the work plus ``status: done``)."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import partial

from uh_core.adapters.manifests import missing_capabilities
from uh_core.clock import timestamp
from uh_core.errors import UhError
from uh_core.events.answers import authors
from uh_core.events.writer import EventLog
from uh_core.git import common_dir, resolve_commit
from uh_core.harness import workspace
from uh_core.harness.agent import AGENT_ID
from uh_core.harness.answer import pending, records, taken
from uh_core.harness.attempt import attempt, evidence_dir
from uh_core.harness.costs import Spend, budget_stop
from uh_core.harness.deliver import deliver
from uh_core.harness.deps import ENDED, Deps
from uh_core.harness.limited import on_limit
from uh_core.harness.parking import wait_until
from uh_core.harness.plan import branch_blocker
from uh_core.harness.profiles import apply, choose
from uh_core.harness.progress import change_of, hand_over, no_progress
from uh_core.harness.prompt import Feedback, branch_name
from uh_core.harness.resume import Resumed, recover
from uh_core.layout import Layout
from uh_core.models.events import (
    HarnessRequirementFinished,
    HarnessRequirementStarted,
    Owner,
)
from uh_core.models.ledger import RequirementRecord
from uh_core.models.mission import Mission
from uh_core.models.verification import Finding
from uh_core.runtime.steering import Steering
from uh_core.sandbox.human import human_lines
from uh_core.sandbox.worktree import list_sandboxes, sandbox_records
from uh_core.security.guard import EngineWrites
from uh_core.verify import flaky
from uh_core.verify.promises import unverified_promises


def finish(
    deps: Deps, log: EventLog, record: RequirementRecord, started: float
) -> RequirementRecord:
    """The record's end (time, duration) and ``harness.requirement.finished`` in its log, on
    every executor; its code is the hand-over's, else the skip's."""
    record.finished_at = timestamp()
    record.duration_ms = int((time.monotonic() - started) * 1000)
    log.emit(
        HarnessRequirementFinished(
            branch=record.branch,
            outcome=record.outcome,
            attempts=len(record.attempts),
            reason=record.reason,
            code=record.handover.code if record.handover is not None else record.skip_code,
        )
    )
    return record


def _skip_reason(deps: Deps, mission: Mission, branch: str, answered: bool) -> str | None:
    if deps.spec.name != AGENT_ID:
        missing = missing_capabilities(mission.capability_ids, deps.spec.manifest)
        if missing:
            return f"runtime {deps.spec.name} lacks capabilities: {', '.join(missing)}"
    if not workspace.branch_exists(deps.layout.root, branch):
        return None
    if answered and not deps.settings.force:  # an answered hand-over continues its branch
        if deps.settings.executor == "ray":
            return (
                f"{mission.id}'s hand-over was answered: it continues in its sandbox on this "
                "machine (run it with --executor local)"
            )
        return None
    if deps.settings.resume:
        if workspace.delivered(deps.layout, mission.id, branch):
            return f"{branch} already passed the gate (--resume has nothing to do): review it"
        return None
    if not deps.settings.force:
        blocker = branch_blocker(mission.id)
        return f"{blocker.message} (fix: {blocker.fix})"
    engine = deps.engine or EngineWrites()
    with engine.writing():
        for entry in list_sandboxes(deps.layout):
            if entry.branch == branch:
                engine.entry(entry.id, None)
        engine.ref(f"refs/heads/{branch}", None)
        return workspace.remove_branch(deps.layout, branch)


@dataclass
class Opening:
    """A mission's run begun, the same on every executor: its record (kept in
    ``deps.current``), log and profile, and why it is skipped (None: it runs; a skip is
    said on the progress line here)."""

    deps: Deps  # with the mission's profile applied
    record: RequirementRecord
    log: EventLog
    started: float
    skip: str | None


def begin(deps: Deps, mission: Mission) -> Opening:
    started = time.monotonic()
    branch = branch_name(mission.id)
    log = EventLog(
        deps.layout.mission_events(mission.id), mission_id=mission.id, run_id=deps.run_id
    )
    record = RequirementRecord(
        mission_id=mission.id, title=mission.display_title, branch=branch,
        base_commit=deps.base_commit, started_at=timestamp(),
    )  # fmt: skip
    deps.current[mission.id] = record
    record.promises = unverified_promises(mission, deps.layout.root)  # listed, never left out
    record.residuals = [f"{c.id}: {c.degraded.gap()}" for c in mission.criteria() if c.degraded]
    profile = choose(deps.profiles, mission, deps.settings.profile)
    if profile is not None:  # this mission's agent and prefix; the run's deps stay as they are
        deps = replace(
            deps,
            settings=apply(deps.settings, profile),
            spec=deps.specs.get(profile.name, deps.spec),
            profile=profile,
        )
        record.profile = profile.name
    answered = bool(pending(deps.layout, mission.id).answers)
    try:
        reason = _skip_reason(deps, mission, branch, answered)
    except UhError as exc:
        reason = f"cannot recreate {branch}: {exc.one_line()}"
    if reason is not None:
        deps.progress(f"{mission.id}: skipped: {reason}")
    return Opening(deps, record, log, started, reason)


def run_requirement(deps: Deps, mission: Mission) -> RequirementRecord:
    """The mission's record; also kept in ``deps.current`` while it runs, so a run stopped
    by an exception can still write it into the ledger."""
    opening = begin(deps, mission)
    deps, record, log, started = opening.deps, opening.record, opening.log, opening.started
    branch = record.branch
    if opening.skip is not None:
        record.outcome, record.reason = "skipped", opening.skip
        return finish(deps, log, record, started)
    log.emit(HarnessRequirementStarted(branch=branch, owner=Owner.here()))
    # the answers given before that line: each prompt of these rounds carries them
    record.answers = records(taken(deps.layout, mission.id))
    steering = Steering(log.path, deps.run_id, deps.spec.name)  # messages sent from now on
    deps.where(mission.id, 0, None)
    try:
        return _started(deps, mission, record, log, started, steering)
    finally:
        left = steering.take()
        if left:  # sent after the last round could take it: said, never silently dropped
            why = f"not delivered: the mission's rounds had ended ({record.outcome})"
            record.steering_left = steering.record(log, left, why, delivered=False)
        deps.where(mission.id, ENDED, None)


def _started(
    deps: Deps,
    mission: Mission,
    record: RequirementRecord,
    log: EventLog,
    started: float,
    steering: Steering | None = None,
) -> RequirementRecord:
    branch = record.branch
    resumed: Resumed | None = None
    try:
        continues = deps.settings.resume or (record.answers and not deps.settings.force)
        if continues and workspace.branch_exists(deps.layout.root, branch):
            resumed = recover(deps.layout, mission.id, deps.base_commit)
            if deps.engine is not None:  # where it is now is where the engine expects it
                with deps.engine.writing():
                    tip = resolve_commit(deps.layout.root, f"refs/heads/{branch}")
                    deps.engine.ref(f"refs/heads/{branch}", tip)
            entry = resumed.entry or workspace.attach_worktree(
                deps.layout, mission.id, deps.spec.name, branch
            )
            workspace.set_sandbox_status(deps.layout, entry.id, "active")
            if record.answers:  # a new series of rounds, numbered after the last one
                who = authors(record.answers)
                resumed.answered(f"the hand-over was answered by {who}")
            record.resumed = resumed.as_dict()
            record.base_commit = resumed.base_commit
            deps.progress(f"{mission.id}: resuming {branch} ({resumed.note})")
        else:
            engine = deps.engine or EngineWrites()
            with engine.writing():  # the ref noted with its write: no guard sees one alone
                engine.ref(f"refs/heads/{branch}", deps.base_commit)
                try:
                    entry = workspace.create_worktree(
                        deps.layout, mission.id, deps.spec.name, deps.base_commit
                    )
                except UhError:
                    engine.ref(f"refs/heads/{branch}", None)
                    raise
    except UhError as exc:
        record.outcome, record.reason = "fail", f"cannot create the worktree: {exc.one_line()}"
        return finish(deps, log, record, started)
    record.sandbox_id, record.worktree = entry.id, entry.worktree
    records = sandbox_records(deps.layout, entry)
    run_base = deps.base_commit
    deps.base_commit = record.base_commit or run_base  # a resumed branch keeps its own base
    try:
        stalled = _attempts(deps, mission, records, entry.id, record, log, resumed, steering)
        last = record.attempts[-1] if record.attempts else None
        if last is not None and last.outcome == "pass":
            deliver(deps, mission, records.root, record, last)
    finally:
        deps.base_commit = run_base
    if record.outcome in ("budget_exhausted", "rate_limited"):
        pass  # its reason says what was spent and what the next attempt would cost
    elif last is None and resumed is not None:
        record.outcome = "fail"
        record.reason = (
            f"every attempt ({resumed.charged} of {deps.settings.max_attempts}) was already "
            f"spent on {branch}; raise --max-attempts, or --force to start over"
        )
    elif last is not None and last.outcome == "interrupted":  # stopped before its gate ruled
        record.outcome, record.reason = "interrupted", last.verdict or "interrupted"
    elif last is None or last.outcome != "pass":
        record.outcome = "fail"
        record.failing_stage = last.stage if last is not None else None
        record.reason = last.verdict if last is not None else "no attempt ran"
        if last is not None and last.outcome == "fail":  # rounds ended red: a human decides
            evidence = partial(evidence_dir, records, mission.id, deps.run_id)
            hand_over(record, mission, stalled, deps.settings.max_attempts, evidence)
    if last is not None:  # what the reviewer should know about the work as it stands
        record.findings = [f for stage in last.stages for f in stage.findings]
        record.review = list(last.review)
    _flaky_found(deps, mission, records, record)
    record.human_lines = human_lines(deps.layout, entry.id)  # the operator's own edits there
    status = "passed" if record.outcome == "pass" else "parked"
    workspace.set_sandbox_status(deps.layout, entry.id, status)
    return finish(deps, log, record, started)


def _flaky_found(deps: Deps, mission: Mission, records: Layout, record: RequirementRecord) -> None:
    """Criteria the rounds found flaky (a verdict changed on the same tree) go into the
    operator's ``.harness/flaky.yaml``, noted as the engine's write."""
    dest = flaky.register_path(deps.layout.harness)
    engine = deps.engine or EngineWrites()
    with engine.writing():
        added = flaky.merge(flaky.register_path(records.harness), dest)
        if added:
            engine.file(deps.layout.root, dest)
    for entry in added:
        message = f"registered in .harness/flaky.yaml: {entry.id} ({' → '.join(entry.runs)})"
        record.findings.append(
            Finding(severity="warning", code="flaky_registered", message=message)
        )
        deps.progress(f"{mission.id}: flaky, registered in .harness/flaky.yaml: {entry.id}")


def _attempts(
    deps: Deps,
    mission: Mission,
    records: Layout,
    sandbox_id: str,
    record: RequirementRecord,
    log: EventLog,
    resumed: Resumed | None = None,
    steering: Steering | None = None,
) -> str | None:
    """Attempts until green, the last, or a round without progress (its reason returned);
    a resumed mission continues after the attempts already charged, with the last
    recorded failure fed back."""
    feedback: Feedback | None = resumed.feedback if resumed is not None else None
    first = resumed.charged + 1 if resumed is not None else 1
    git_dir = common_dir(deps.layout.root)
    n, charged, parks = first, first - 1, 0
    if record.answers and resumed is not None:  # the answer opens a series of its own
        n, charged = resumed.last_attempt + 1, 0
    resume_at: float | None = None  # parked: when this mission's limit lifts
    while charged < deps.settings.max_attempts:
        stop = budget_stop(
            Spend.of(record.attempts),
            Spend.of(deps.run_attempts()),
            mission.budget_usd,
            deps.settings.budget_usd,
        )
        if stop is not None:
            record.outcome, record.reason = "budget_exhausted", f"attempt {n} not started: {stop}"
            deps.progress(f"{mission.id}: budget exhausted: {record.reason}")
            return None
        moment = resume_at if resume_at is not None else deps.limits.lifts_at(deps.spec.name)
        resume_at = None
        if not wait_until(moment, deps.token):
            return None  # cancelled while the runtime's limit was on
        current = attempt(
            deps, mission, records, sandbox_id, n, feedback, log, record.answers, steering
        )
        n += 1
        before = record.attempts[-1].tree if record.attempts else None
        record.attempts.append(current)
        current.change = change_of(deps.layout.root, git_dir, before or deps.base_commit, current)
        if current.outcome == "rate_limited":  # not charged: wait, or another runtime
            parks += 1
            deps, resume_at = on_limit(deps, mission, record, current, parks, log)
            if record.outcome == "rate_limited":
                return None
            continue
        charged += 1
        if current.outcome != "fail" or deps.token.reason is not None:
            return None
        stalled = no_progress([a for a in record.attempts if a.outcome != "rate_limited"])
        if stalled is not None:
            deps.progress(f"{mission.id}: no progress: {stalled}")
            return stalled
        assert current.stage is not None
        detail = current.verdict.removeprefix(f"red at {current.stage}: ")
        feedback = Feedback(current.attempt, current.stage, detail, current.failure_output)
    return None
