"""``uh-core mission dry-run | run`` (registered under ``mission``; cancel has its own module)."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any

from uh_core.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_NOT_PASSED,
    EXIT_OK,
    add_isolation_flag,
    add_json,
    add_root,
    cancel_on_signals,
    context,
    is_interrupt,
    positive_float,
    print_json,
    require_harness,
    security_lines,
)
from uh_core.shown import plural


def register_actions(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, helptext, handler in (
        (
            "dry-run",
            "the launch plan and the exact prompt; runs and creates nothing",
            handle_dry_run,
        ),
        ("run", "run one runtime in a new sandbox, observed live", handle_run),
    ):
        parser = group.add_parser(name, help=helptext)
        parser.add_argument("mission_id", metavar="ID")
        parser.add_argument("--runtime", required=True, metavar="R", help="adapter id")
        parser.add_argument(
            "--force",
            action="store_true",
            help="run even if the runtime lacks capabilities the mission needs",
        )
        if name == "run":
            parser.add_argument(
                "--timeout",
                type=positive_float,
                default=None,
                metavar="S",
                help="stop the agent after S seconds (default: no limit)",
            )
            parser.add_argument(
                "--base",
                default="HEAD",
                metavar="REV",
                help="commit the sandbox starts from (default HEAD)",
            )
        add_isolation_flag(parser)  # dry-run: the plan under the isolation a run would use
        add_root(parser)
        add_json(parser)
        parser.set_defaults(handler=handler)
    from uh_core.cli.mission_cancel_cmd import register_cancel
    from uh_core.cli.mission_steer_cmd import register_steer

    register_cancel(group)
    register_steer(group)


def _load(args: argparse.Namespace) -> Any:
    from uh_core.adapters.manifests import load_manifest
    from uh_core.missions import load_mission

    ctx = context(args)
    require_harness(ctx)
    mission = load_mission(ctx.layout, args.mission_id).mission
    manifest = load_manifest(ctx.layout, args.runtime)
    return ctx, mission, manifest


def handle_dry_run(args: argparse.Namespace) -> int:
    from uh_core.runtime.run import check_capabilities, dry_run

    ctx, mission, manifest = _load(args)
    missing = check_capabilities(mission, manifest, args.force)
    plan, prompt = dry_run(ctx.layout, mission, manifest, args.isolation)
    # The agent's environment by name and the rule that admitted it, never a value: the
    # operator's values are secrets, and a plan is shown, pasted and kept.
    env = [{"name": name, "rule": rule} for name, rule in plan.env_names.items()]
    if ctx.json:
        print_json(
            {
                "plan": plan.model_dump(mode="json", exclude={"env"}),
                "env": env,
                "prompt": prompt,
                "missing_capabilities": missing,
            }
        )
        return EXIT_OK
    print(f"runtime: {plan.runtime} ({plan.runtime_kind})")
    print(f"cwd: {plan.cwd}")
    print(f"command: {plan.display}")
    for item in env:
        print(f"env: {item['name']} ({item['rule']})")
    if missing:
        print(f"forced past missing capabilities: {', '.join(missing)}")
    print("--- prompt ---")
    sys.stdout.write(prompt)
    return EXIT_OK


def handle_run(args: argparse.Namespace) -> int:
    from uh_core.runtime import active
    from uh_core.runtime.run import CancelToken, RunOptions, run_mission

    ctx, mission, manifest = _load(args)
    token = CancelToken()

    def reason(default: str) -> str:  # `mission cancel` left one; a bare SIGTERM interrupts
        return active.cancel_reason(ctx.layout, mission.id, default)

    with cancel_on_signals(token, reason):
        outcome = run_mission(
            ctx.layout,
            mission,
            manifest,
            RunOptions(
                force=args.force, timeout_s=args.timeout, base=args.base, isolation=args.isolation
            ),
            token,
        )
    if ctx.json:
        print_json(
            {
                "mission_id": outcome.mission_id,
                "runtime": outcome.runtime,
                "status": outcome.status,
                "exit_code": outcome.exit_code,
                "signal": outcome.signal,
                "duration_ms": outcome.duration_ms,
                "sandbox": outcome.sandbox.id if outcome.sandbox else None,
                "diff_hash": outcome.diff_hash,
                "touched_paths": outcome.touched_paths,
                "final_message": outcome.final_message,
                "error": outcome.error,
                "result": outcome.result_file,
                "isolation": outcome.isolation,
                "isolation_note": outcome.isolation_note,
                "survivors": outcome.survivors,
                "tampered": outcome.tampered,
            }
        )
    else:
        print(f"[{outcome.status.upper()}] {outcome.mission_id} on {outcome.runtime}")
        for line in security_lines(outcome.isolation, outcome.isolation_note, outcome.tampered):
            print(line)
        if outcome.sandbox:
            print(f"sandbox: {outcome.sandbox.id} ({outcome.sandbox.worktree})")
        print(
            f"exit: {_exit_text(outcome.exit_code, outcome.signal)} · {outcome.duration_ms} ms · "
            f"{plural(len(outcome.touched_paths), 'file')} changed · "
            # no change: no diff to name (the hash of an empty patch would read as one)
            f"diff {(outcome.diff_hash if outcome.touched_paths else None) or '-'}"
        )
        if outcome.error:
            print(f"error: {outcome.error}")
        if outcome.final_message:
            print(f"final message: {outcome.final_message.strip().splitlines()[0][:200]}")
        if outcome.result_file:
            print(f"result: {outcome.result_file}")
    if is_interrupt(token.reason):
        return EXIT_INTERRUPTED
    return EXIT_OK if outcome.status == "succeeded" else EXIT_NOT_PASSED


def _exit_text(code: int | None, signum: int | None) -> str:
    """``0``, ``1``…, or the signal that ended the agent (``SIGTERM``), or ``-`` (no agent)."""
    if code is not None:
        return str(code)
    if signum is not None:
        try:
            return signal.Signals(signum).name
        except ValueError:
            return f"signal {signum}"
    return "-"
