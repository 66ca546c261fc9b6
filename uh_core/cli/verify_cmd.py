"""``uh-core verify ID [--repeat N] [--timeout S] [--json]``."""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
from pathlib import Path
from typing import TYPE_CHECKING

from uh_core.cli.common import (
    EXIT_NOT_PASSED,
    EXIT_OK,
    add_json,
    add_root,
    context,
    positive_float,
    positive_int,
    print_json,
    require_harness,
    warn,
)

if TYPE_CHECKING:
    from uh_core.layout import Layout
    from uh_core.models.mission import Mission
    from uh_core.models.verification import VerificationResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "verify",
        help="run a mission's required checks and acceptance criteria",
        description="Run required checks, then acceptance criteria in order; decide "
        "passed / failed / blocked. Exit 0 passed, 1 failed or blocked, 2 bad input.",
    )
    parser.add_argument("mission_id", metavar="ID")
    parser.add_argument(
        "--repeat",
        type=positive_int,
        default=1,
        metavar="N",
        help="run each criterion N times on the same revision; a changing verdict is flaky",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=600.0,
        metavar="S",
        help="seconds for each check without its own timeout_s (default 600)",
    )
    parser.add_argument(
        "--sandbox",
        metavar="SBX",
        help="verify inside this sandbox's repository (evidence kept in the sandbox)",
    )
    add_root(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from uh_core.missions import load_mission
    from uh_core.verify.report import render
    from uh_core.verify.runner import VerifyOptions, verify_mission
    from uh_core.verify.synthetic import synthetic_criteria

    ctx = context(args)
    require_harness(ctx)
    loaded = load_mission(ctx.layout, args.mission_id)
    # Everything imported and loaded so far lives until exit: out of the cyclic collector's
    # sight, its collections during the run only walk what the run creates (a full one
    # walked every module and model: 35-50 ms, several times in a long mission).
    gc.freeze()
    options = VerifyOptions(repeat=args.repeat, timeout_s=args.timeout)
    if args.sandbox:
        from uh_core.judge.in_sandbox import sandbox_layout, verify_in_sandbox

        where = sandbox_layout(ctx.layout, args.sandbox)
        _move_to(where.root)
        result = verify_in_sandbox(ctx.layout, loaded.mission, args.sandbox, options)
    else:
        where = ctx.layout
        _move_to(where.root)
        options.synthetic = synthetic_criteria(ctx.layout, loaded.mission)
        result = verify_mission(ctx.layout, loaded.mission, options)
    if ctx.json:
        print_json(result.model_dump(mode="json"))
    else:
        print(render(result, ctx.layout.rel(where.verification_file(result.mission_id))))
    if args.sandbox:
        _auto_promote(ctx.layout, loaded.mission, args.sandbox, result, quiet=ctx.json)
    return EXIT_OK if result.status == "passed" else EXIT_NOT_PASSED


def _move_to(folder: Path) -> None:
    """Work from the folder the checks run in: every path from here on is absolute, and a
    command whose cwd is ours starts with ``posix_spawn`` (see ``uh_core.proc.spawn``)."""
    with contextlib.suppress(OSError):  # stay put: commands then start through Popen
        os.chdir(folder)


def _auto_promote(
    layout: Layout, mission: Mission, sandbox_id: str, result: VerificationResult, quiet: bool
) -> None:
    """``sandbox.promotion_policy: auto-on-verify``; never changes the verify's exit code."""
    from uh_core.promote.auto import after_sandbox_verify
    from uh_core.promote.policy import policy_typo

    typo = policy_typo(mission)
    if typo:
        warn(typo)
    outcome = after_sandbox_verify(layout, mission, sandbox_id, result)
    if outcome is None:
        return
    if outcome.record is not None and not quiet:
        commit = outcome.record.commit or ""
        print(f"promotion: auto-on-verify promoted {sandbox_id} as {commit[:12]}")
    elif outcome.failure is not None:
        warn(f"auto-on-verify did not promote {sandbox_id}: {outcome.failure}")
