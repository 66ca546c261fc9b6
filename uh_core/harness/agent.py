"""One agent invocation per attempt, through the adapter lifecycle.

``--agent "CMD {prompt_file}"`` becomes a ``command`` adapter (the path substituted
shell-quoted); ``--runtime NAME`` uses that manifest's adapter. Either way the agent runs
in its own process group in the worktree, observed live (``runtime.*`` events in the
mission's log), stopped as a group on ``--timeout`` or a stop request, and its final
message is read from the sentinel block.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from uh_core.adapters.agentenv import project_allow_list
from uh_core.adapters.base import Adapter, LaunchContext, LaunchPlan, Session
from uh_core.adapters.manifests import load_manifest
from uh_core.adapters.registry import make_adapter
from uh_core.adapters.usage import token_usages
from uh_core.errors import HarnessError, UhError
from uh_core.events.writer import EventLog
from uh_core.harness.config import Settings
from uh_core.layout import Layout
from uh_core.models.adapter import AdapterManifest
from uh_core.models.events import Owner, RuntimeFinished, RuntimeProgress, RuntimeStarted
from uh_core.models.ledger import AgentRecord
from uh_core.models.mission import Mission
from uh_core.models.runtime import RuntimeResult
from uh_core.models.usage import TokenUsage
from uh_core.runtime.run import NO_CHANGE, CancelToken
from uh_core.runtime.steering import Steering, continue_steered
from uh_core.security.guard import AgentGuard

AGENT_ID = "agent"  # the runtime name of an --agent command (sandbox ids, events)
_MESSAGE_LIMIT = 500
_POLL_S = 0.1


@dataclass(frozen=True)
class AgentSpec:
    manifest: AdapterManifest
    adapter: Adapter

    @property
    def name(self) -> str:
        return self.manifest.id


@dataclass
class AgentOutcome:
    record: AgentRecord
    completed: bool  # exit 0, in time, not cancelled, no error reported
    final_message: str
    problems: list[str]  # why it did not complete
    stdout_tail: str
    stderr_tail: str
    # ``runtime.finished``, for the attempt to emit once it knows the diff (``no_change``)
    finished: RuntimeFinished | None = None
    usage: list[TokenUsage] = field(default_factory=list)  # per model, as the CLI reported


def agent_spec(
    layout: Layout,
    agent: str | None,
    runtime: str | None,
    settings: Settings | None = None,
    *,
    here: bool = True,
) -> AgentSpec:
    """The adapter to run; a runtime that cannot run here is refused before anything starts.
    ``harness.config.yaml``'s ``isolation_writable``/``isolation_readable`` join the
    manifest's own. ``here=False``: it runs on other nodes (``--executor ray``), which
    check that for themselves."""
    if agent is not None:
        manifest = AdapterManifest(
            id=AGENT_ID, runtime_kind="command", status="active", config={"command": agent}
        )
        _isolation_paths(manifest, settings)
        return AgentSpec(manifest, make_adapter(manifest, project_allow_list(layout)))
    if runtime is None:
        raise HarnessError("no agent to run")
    manifest = load_manifest(layout, runtime)
    _isolation_paths(manifest, settings)
    adapter = make_adapter(manifest, project_allow_list(layout))
    available = adapter.check() if here else None
    if available is not None and not available.ok:
        raise HarnessError(
            f"runtime {runtime!r} cannot run here: {available.reason}",
            fix="install it, or choose another --runtime / --agent",
        )
    return AgentSpec(manifest, adapter)


def _isolation_paths(manifest: AdapterManifest, settings: Settings | None) -> None:
    if settings is None:
        return
    for key, paths in (
        ("isolation_writable", settings.isolation_writable),
        ("isolation_readable", settings.isolation_readable),
    ):
        own = manifest.config.get(key)
        manifest.config[key] = [*(own if isinstance(own, list) else []), *paths]


def _watch(
    spec: AgentSpec, session: Session, log: EventLog, deadline: float | None, token: CancelToken
) -> None:
    while True:
        for event in spec.adapter.observe(session):
            log.emit(
                RuntimeProgress(
                    runtime=spec.name, kind=event.kind, message=event.message[:_MESSAGE_LIMIT]
                )
            )
        if token.reason is not None:
            spec.adapter.cancel(session, token.reason)
            return
        if deadline is not None and time.monotonic() >= deadline:
            session.process.stop((signal.SIGTERM,), timed_out=True)
            return
        if spec.adapter.wait(session, _POLL_S) is not None:
            return


def _agent_owner(pid: int) -> Owner:
    """The agent's group leader (its own session: pid = pgid = sid) as a process identity."""
    from uh_core.procid import host, start_time

    return Owner(pid=pid, start_time=start_time(pid), host=host())


def run_agent(
    spec: AgentSpec,
    mission: Mission,
    worktree: Path,
    attempt_dir: Path,
    prompt_file: Path,
    sandbox_id: str,
    timeout_s: float | None,
    token: CancelToken,
    log: EventLog,
    guard: AgentGuard | None = None,
    steering: Steering | None = None,
    attempt: int | None = None,
) -> AgentOutcome:
    """The agent's turn, watched to its end; while the operator has steered it meanwhile and
    the turn ended well, the agent is continued in the same sandbox with the message(s)
    (``uh_core.runtime.steering``), within the same deadline. Its record says how."""
    ctx = LaunchContext(
        mission, spec.manifest, worktree, attempt_dir, prompt_file, sandbox_id, timeout_s
    )
    if guard is not None:
        ctx.isolation, ctx.isolation_note = guard.isolation.mode, guard.isolation.note
        ctx.readable = [Path(p) for p in guard.readable()]
    started = time.monotonic()
    record = AgentRecord(runtime=spec.name, command="")
    try:
        plan = spec.adapter.prepare(ctx)
        record.command = plan.display
        record.stdout_log, record.stderr_log = plan.stdout_log, plan.stderr_log
        session = spec.adapter.launch(plan)
    except UhError as exc:
        record.duration_ms = int((time.monotonic() - started) * 1000)
        log.emit(RuntimeFinished(runtime=spec.name, status="failed", reason=exc.one_line()))
        return AgentOutcome(record, False, "", [exc.one_line()], "", "")
    deadline = started + timeout_s if timeout_s else None

    def turn(plan: LaunchPlan, session: Session) -> tuple[RuntimeResult, str]:
        return _turn(spec, session, plan, sandbox_id, log, deadline, token)

    result, final = turn(plan, session)
    turns = continue_steered(
        spec.adapter, ctx, (plan, session, result, final), steering, log, turn,
        lambda: token.reason is not None, attempt,
    )  # fmt: skip
    session, result, final = turns.session, turns.result, turns.final
    record.steered, record.continued = turns.steered, turns.continued
    usage = [u for each in turns.sessions for u in token_usages(each.parser.meter)]
    proc = session.process.wait(0)
    record.exit_code = result.exit_code
    record.timed_out = bool(proc is not None and proc.timed_out)
    record.cancelled = session.cancelled
    record.rate_limited = result.status == "rate_limited"
    record.retry_after_s = result.retry_after_s
    record.duration_ms = int((time.monotonic() - started) * 1000)
    return AgentOutcome(
        record=record,
        completed=result.status == "completed",
        final_message=final,
        problems=list(result.blockers),
        stdout_tail=proc.stdout_snippet if proc is not None else "",
        stderr_tail=proc.stderr_snippet if proc is not None else "",
        finished=RuntimeFinished(
            runtime=spec.name,
            status="succeeded" if result.status == "completed" else result.status,
            exit_code=result.exit_code,
            duration_ms=record.duration_ms,
            reason="; ".join(result.blockers) or None,
            retry_after_s=result.retry_after_s,
        ),
        usage=usage,
    )


def _turn(
    spec: AgentSpec,
    session: Session,
    plan: LaunchPlan,
    sandbox_id: str,
    log: EventLog,
    deadline: float | None,
    token: CancelToken,
) -> tuple[RuntimeResult, str]:
    """One launch of the agent, started, watched to its end and collected."""
    log.emit(
        RuntimeStarted(
            runtime=spec.name,
            sandbox_id=sandbox_id,
            command=plan.display,
            agent=_agent_owner(session.process.pid),  # what --resume stops if it outlives us
        )
    )
    try:
        _watch(spec, session, log, deadline, token)
        return spec.adapter.collect(session)
    finally:
        spec.adapter.close(session)


def finished_event(
    agent: AgentOutcome, touched: list[str] | None, diff_hash: str | None = None
) -> RuntimeFinished | None:
    """The agent's ``runtime.finished`` as the ledger tells it: an agent that ended well but
    changed nothing (``touched`` empty) is ``no_change``, as in ``mission run``; ``touched``
    None: the diff is not known (the event as the agent ended)."""
    event = agent.finished
    if event is None or touched is None:
        return event
    update: dict[str, object] = {"files_changed": len(touched), "diff_hash": diff_hash}
    if event.status == "succeeded" and not touched:
        update |= {"status": "no_change", "reason": NO_CHANGE}
    changed: RuntimeFinished = event.model_copy(update=update)
    return changed
