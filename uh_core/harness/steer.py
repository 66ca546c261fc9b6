"""``uh-core mission steer ID "message"``: a message to the agent working on a mission now.

The message is addressed to the run working on the mission — found by its registration, alive
(``uh_core.harness.cancel.on_mission``) — and to that run's agent on the mission (its
``runtime.started`` in the mission's log; else the run's own agent). A runtime whose kind
cannot be continued (``Adapter.steer_by`` is None), a mission nothing works on, or a run on
another host is refused before anything is written. Else one ``steering.message`` event is
appended to the mission's log; the run delivers it (``uh_core.runtime.steering``).
"""

from __future__ import annotations

from dataclasses import dataclass

from uh_core.clock import timestamp
from uh_core.errors import HarnessError
from uh_core.events.writer import EventLog
from uh_core.layout import Layout
from uh_core.models.events import SteeringMessage
from uh_core.runtime.steering import check_text


@dataclass(frozen=True)
class Sent:
    mission_id: str
    run_id: str
    runtime: str
    where: str  # "harness run R (attempt N)"
    delivery: str  # how the run will deliver it (the adapter's steer_by)
    event: SteeringMessage

    def line(self) -> str:
        return f"sent to {self.runtime} on {self.mission_id} in {self.where}: it is {self.delivery}"


def steer_by(layout: Layout, runtime: str) -> str | None:
    """How ``runtime``'s agent takes a steering message (None: it cannot)."""
    from uh_core.adapters.manifests import load_manifest
    from uh_core.adapters.registry import adapter_class
    from uh_core.harness.agent import AGENT_ID

    if runtime == AGENT_ID:  # an --agent command
        return adapter_class("command").steer_by
    return adapter_class(load_manifest(layout, runtime).runtime_kind).steer_by


def _runtime_on(layout: Layout, mission_id: str, run_id: str) -> str | None:
    """The runtime the run last started on the mission, from the mission's log."""
    from uh_core.events.reader import read_events
    from uh_core.models.events import RuntimeStarted

    path = layout.mission_events(mission_id)
    events = read_events(path)[0] if path.is_file() else []
    started = [e for e in events if isinstance(e, RuntimeStarted) and e.run_id == run_id]
    return started[-1].runtime if started else None


def _send(
    layout: Layout, mission_id: str, run_id: str, runtime: str, message: str, by: str
) -> tuple[str, SteeringMessage]:
    """The runtime's way of taking it (refused when it has none), and the message sent."""
    how = steer_by(layout, runtime)
    if how is None:
        raise HarnessError(
            f"runtime {runtime} cannot be steered: uh cannot continue its session yet",
            fix=f"`uh-core mission cancel {mission_id}` stops it; change the mission and run it "
            "again, or answer it once it is handed over",
        )
    event = SteeringMessage(runtime=runtime, message=message, by=by, timestamp=timestamp())
    EventLog(layout.mission_events(mission_id), mission_id=mission_id, run_id=run_id).emit(event)
    return how, event


def _mission_run(
    layout: Layout, mission_id: str, message: str, by: str, runtime: str | None
) -> Sent | None:
    """A live ``mission run`` (or ``run-all``'s runs) on the mission: the one to steer (its
    run id is its sandbox's); None when none runs."""
    from uh_core.runtime import active

    runs = [
        run for _, run in active.active_runs(layout, mission_id)
        if active.runner_alive(run.runner_pid, run.runner_start)
        and (runtime is None or run.runtime == runtime)
    ]  # fmt: skip
    if not runs:
        return None
    if len(runs) > 1:
        names = ", ".join(sorted(run.runtime for run in runs))
        raise HarnessError(
            f"{len(runs)} runtimes work on {mission_id} now ({names}): say which one is steered",
            fix=f'uh-core mission steer {mission_id} --runtime {runs[0].runtime} "…"',
        )
    run = runs[0]
    how, event = _send(layout, mission_id, run.sandbox_id, run.runtime, message, by)
    where = f"mission run in sandbox {run.sandbox_id}"
    return Sent(mission_id, run.sandbox_id, run.runtime, where, how, event)


def send_steering(
    layout: Layout, mission_id: str, text: str, by: str, runtime: str | None = None
) -> Sent:
    from uh_core.harness.cancel import on_mission
    from uh_core.missions import load_mission

    load_mission(layout, mission_id)  # an unknown or unreadable mission says so, first
    message = check_text(text, "message")
    working, queued = on_mission(layout, mission_id)
    if not working:
        sent = _mission_run(layout, mission_id, message, by, runtime)
        if sent is not None:
            return sent
        later = f" (harness run {queued[0].run.run_id} will reach it)" if queued else ""
        which = f" on {runtime}" if runtime else ""
        raise HarnessError(
            f"nothing is working on {mission_id}{which} now{later}: only a running agent is "
            "steered",
            fix=f'a mission handed over is answered: `uh-core harness answer {mission_id} "…"`',
        )
    target = working[0]
    run = target.run
    if target.elsewhere:
        raise HarnessError(
            f"harness run {run.run_id} runs on host {run.host}, not here",
            fix=f"steer it on {run.host}",
        )
    if run.executor != "local":
        raise HarnessError(
            f"harness run {run.run_id} runs its agents on a Ray cluster: steering reaches "
            "only an agent this machine runs",
            fix=f"`uh-core mission cancel {mission_id}`, or let the round end and answer it",
        )
    runtime = _runtime_on(layout, mission_id, run.run_id) or run.runtime
    if runtime is None:
        raise HarnessError(
            f"harness run {run.run_id} has not said which agent works on {mission_id} yet",
            fix="wait for its attempt to start (`uh-core tail` shows it), then steer",
        )
    how, event = _send(layout, mission_id, run.run_id, runtime, message, by)
    attempt = run.running.get(mission_id, 0) if isinstance(run.running, dict) else 0
    where = f"harness run {run.run_id}" + (f" (attempt {attempt})" if attempt else "")
    return Sent(mission_id, run.run_id, runtime, where, how, event)
