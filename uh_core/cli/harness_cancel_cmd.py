"""``uh-core harness cancel [RUN_ID]``, and the running side it talks to.

``run_cancellable`` is how ``harness run`` runs: Ctrl-C, SIGTERM and SIGHUP cancel its token, and
the run is registered (``.harness/runs/active/<run-id>.json``) while it goes, so ``harness
cancel`` (or ``mission cancel`` on the mission in progress) can find it, check it is still
that process, and stop it with a reason.
"""

from __future__ import annotations

import argparse
import signal
from typing import TYPE_CHECKING

from uh_core.cli.common import (
    EXIT_OK,
    add_json,
    add_root,
    catch_signals,
    context,
    interrupt_reason,
    print_json,
    require_harness,
    restore_signals,
)
from uh_core.proc.interrupts import raise_interrupt

if TYPE_CHECKING:  # the parser is built for every command: imports stay lazy
    from uh_core.harness.loop import HarnessRun
    from uh_core.models.ledger import HarnessLedger


def register_cancel(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cancel = actions.add_parser(
        "cancel",
        help="stop a running harness run: the attempt is recorded interrupted, the ledger "
        "written, --resume continues it",
    )
    cancel.add_argument(
        "run_id", nargs="?", metavar="RUN_ID", help="the run (default: the only one running)"
    )
    cancel.add_argument("--reason", metavar="TEXT", help="recorded after 'cancelled: '")
    cancel.add_argument("--wait", type=float, default=30.0, help=argparse.SUPPRESS)
    add_root(cancel)
    add_json(cancel)
    cancel.set_defaults(handler=handle_cancel)


def handle_cancel(args: argparse.Namespace) -> int:
    from uh_core.harness.cancel import cancel, choose

    ctx = context(args)
    require_harness(ctx)
    target = choose(ctx.layout, args.run_id)
    outcome = cancel(ctx.layout, target, args.reason, args.wait)
    if ctx.json:
        print_json(outcome.as_dict())
    else:
        print(outcome.line())
    return EXIT_OK if outcome.ended else 1


def run_cancellable(runner: HarnessRun) -> HarnessLedger:
    """``runner.run()`` registered and under signals: the first Ctrl-C, SIGTERM or SIGHUP
    stops the agent and ends the run with its ledger; a second Ctrl-C stops at once."""
    from uh_core.runtime.active import HarnessRegistration

    token = runner.token
    registration: HarnessRegistration | None = None

    def on_signal(signum: int, _frame: object) -> None:
        if token.reason is not None and signum == signal.SIGINT:
            raise_interrupt(signum)  # a second Ctrl-C: stop now (the ledger is still written)
            return  # held while a command starts: raised as that ends (proc/interrupts.py)
        default = interrupt_reason(signum)
        if signum == signal.SIGTERM and registration is not None:
            default = registration.reason(default)  # `harness cancel` left one
        token.cancel(default)

    previous = catch_signals(on_signal)
    try:
        missions = [m.mission.id for m in runner.prepared.selection.missions]
        registration = HarnessRegistration(
            runner.layout, runner.run_id, missions, runner.ledger.started_at,
            runner.deps.spec.name, runner.prepared.settings.executor,
        )  # fmt: skip
        runner.deps.where = registration.at
        return runner.run()
    finally:
        if registration is not None:
            registration.close()
        restore_signals(previous)
