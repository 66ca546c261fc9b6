"""``uh-core harness run | prompt``: the delivery loop (contract §7)."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from uh_core.cli.common import (
    EXIT_OK,
    add_root,
    context,
    positive_float,
    print_json,
    require_harness,
)


def _add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default text)"
    )
    parser.add_argument("--json", action="store_true", help="same as --format json")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = sub.add_parser("harness", help="the delivery loop: worktree, agent, gate, branch")
    actions = group.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True

    run = actions.add_parser(
        "run", help="run every pending mission through agent and gate onto harness/<id>"
    )
    run.add_argument(
        "--req", action="append", default=[], metavar="ID", help="only this mission (repeatable)"
    )
    run.add_argument(
        "--agent",
        metavar="CMD",
        help="agent command; {prompt_file} is replaced by the prompt's path",
    )
    run.add_argument("--runtime", metavar="NAME", help="adapter id to run instead of --agent")
    run.add_argument("--test-cmd", metavar="CMD", help="test command; {mission} is the id")
    run.add_argument("--max-attempts", type=int, metavar="N", help="attempts per mission")
    run.add_argument(
        "--timeout", type=positive_float, metavar="S", help="stop each agent run after S s"
    )
    run.add_argument(
        "--force", action="store_true", help="delete and recreate an existing harness/<id> branch"
    )
    run.add_argument(
        "--strict-tests",
        action="store_true",
        help="fail when the agent changed a required test function",
    )
    run.add_argument(
        "--strict-artifacts",
        action="store_true",
        help="fail when a declared expected file was not touched",
    )
    _add_format(run)
    add_root(run)
    run.set_defaults(handler=handle_run)

    prompt = actions.add_parser("prompt", help="print the exact prompt; touches nothing")
    prompt.add_argument("mission_id", metavar="ID")
    prompt.add_argument("--test-cmd", metavar="CMD", help="as for `harness run`")
    _add_format(prompt)
    add_root(prompt)
    prompt.set_defaults(handler=handle_prompt)


def _wants_json(args: argparse.Namespace) -> bool:
    return bool(args.json or args.format == "json")


def handle_run(args: argparse.Namespace) -> int:
    from uh_core.harness.config import Flags
    from uh_core.harness.loop import HarnessRun, prepare
    from uh_core.harness.summary import as_json, exit_code, render
    from uh_core.runtime.run import CancelToken

    ctx = context(args)
    require_harness(ctx)
    flags = Flags(
        agent=args.agent,
        runtime=args.runtime,
        test_cmd=args.test_cmd,
        max_attempts=args.max_attempts,
        timeout_s=args.timeout,
        force=args.force,
        strict_tests=args.strict_tests,
        strict_artifacts=args.strict_artifacts,
        requested=tuple(args.req),
    )
    prepared = prepare(ctx.layout, flags)
    token = CancelToken()

    def on_signal(signum: int, _frame: object) -> None:
        if token.reason is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: stop now (the ledger is still written)
        token.cancel("interrupted" if signum == signal.SIGINT else "cancelled (SIGTERM)")

    def progress(line: str) -> None:
        sys.stderr.write(f"uh-core: harness: {line}\n")
        sys.stderr.flush()

    runner = HarnessRun(prepared, token, progress=progress)
    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        ledger = runner.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    assert runner.ledger_file is not None
    shown = ctx.layout.rel(runner.ledger_file)
    if _wants_json(args):
        print_json(as_json(ledger, shown))
    else:
        print(render(ledger, shown))
    return exit_code(ledger)


def handle_prompt(args: argparse.Namespace) -> int:
    from uh_core.harness.config import Flags, load_config, resolve
    from uh_core.harness.prompt import build_prompt
    from uh_core.missions import load_mission

    ctx = context(args)
    require_harness(ctx)
    settings = resolve(ctx.layout, load_config(ctx.layout), Flags(test_cmd=args.test_cmd))
    mission = load_mission(ctx.layout, args.mission_id).mission
    text = build_prompt(mission, settings)
    if _wants_json(args):
        data: dict[str, Any] = {"mission_id": mission.id, "attempt": 1, "prompt": text}
        print_json(data)
    else:
        sys.stdout.write(text)
    return EXIT_OK
