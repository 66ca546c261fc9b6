"""``uh-core mission cancel ID``: stop whatever is running for one mission.

A ``mission run`` (or each runtime of a ``run-all``) on it is asked to stop through its
registration; a ``harness run`` working on it now is cancelled as ``harness cancel RUN_ID``
would (the whole run stops: its attempt is recorded ``interrupted``, its ledger written).
A harness run that has the mission queued but is working on another is not touched: the
message names it and the command that would stop it.
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from typing import Any

from uh_core.cli.common import (
    EXIT_NOT_PASSED,
    EXIT_OK,
    add_json,
    add_root,
    context,
    print_json,
    require_harness,
)
from uh_core.layout import Layout

DEFAULT_REASON = "cancelled by the operator"


def register_cancel(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cancel = group.add_parser(
        "cancel",
        help="cancel what runs for a mission (mission run, run-all, or the harness run on it), "
        "recording partial state",
    )
    cancel.add_argument("mission_id", metavar="ID")
    cancel.add_argument("--reason", default=None, help=f"default: {DEFAULT_REASON}")
    cancel.add_argument("--wait", type=float, default=30.0, help=argparse.SUPPRESS)
    add_root(cancel)
    add_json(cancel)
    cancel.set_defaults(handler=handle_cancel)


def _mission_runs(
    layout: Layout, mission_id: str, reason: str, wait: float
) -> list[dict[str, Any]]:
    from uh_core.events.writer import EventLog
    from uh_core.models.events import RuntimeCancelled, RuntimeFinished
    from uh_core.proc import stop_group
    from uh_core.runtime import active

    cancelled: list[dict[str, Any]] = []
    for path, run in active.active_runs(layout, mission_id):
        if active.runner_alive(run.runner_pid, run.runner_start):
            # The runner records the cancellation itself and removes its registration.
            active.request_cancel(path, reason)
            os.kill(run.runner_pid, signal.SIGTERM)
            deadline = time.monotonic() + wait
            while path.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            how = "runner stopped the agent" if not path.exists() else "runner did not answer"
        else:
            if run.agent_pgid > 0:
                stop_group(run.agent_pgid, 2.0, (signal.SIGINT, signal.SIGTERM))
            log = EventLog(
                layout.mission_events(run.mission_id),
                mission_id=run.mission_id,
                run_id=run.sandbox_id,
            )
            log.emit(RuntimeCancelled(runtime=run.runtime, reason=reason))
            log.emit(
                RuntimeFinished(
                    runtime=run.runtime,
                    status="cancelled",
                    reason="runner was gone; agent group stopped by cancel",
                )
            )
            active.unregister(path)
            how = "runner was gone; agent stopped"
        cancelled.append({"runtime": run.runtime, "sandbox": run.sandbox_id, "how": how})
    return cancelled


def handle_cancel(args: argparse.Namespace) -> int:
    from uh_core.harness.cancel import cancel, on_mission
    from uh_core.missions import load_mission

    ctx = context(args)
    require_harness(ctx)
    mission_id = args.mission_id
    load_mission(ctx.layout, mission_id)
    cancelled = _mission_runs(ctx.layout, mission_id, args.reason or DEFAULT_REASON, args.wait)
    working, queued = on_mission(ctx.layout, mission_id)
    harness = [cancel(ctx.layout, item, args.reason, args.wait) for item in working]
    if ctx.json:
        print_json(
            {
                "mission_id": mission_id,
                "cancelled": cancelled,
                "harness": [outcome.as_dict() for outcome in harness],
            }
        )
    for item in cancelled:
        if not ctx.json:
            print(f"cancelled {mission_id} on {item['runtime']} ({item['sandbox']}): {item['how']}")
    for outcome in harness:
        if not ctx.json:
            print(outcome.line())
    if not cancelled and not harness and not ctx.json:
        if queued:
            run_id = queued[0].run.run_id
            print(
                f"nothing is running for mission {mission_id} yet: harness run {run_id} will "
                f"reach it (`uh-core harness cancel {run_id}` stops that run)"
            )
        else:
            print(f"nothing is running for mission {mission_id}")
    stopped = bool(cancelled) or any(outcome.ended for outcome in harness)
    return EXIT_OK if stopped else EXIT_NOT_PASSED
