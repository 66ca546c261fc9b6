"""``uh-core mission run-all``: cross-runtime QA (registered under ``mission``)."""

from __future__ import annotations

import argparse

from uh_core.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_NOT_PASSED,
    EXIT_OK,
    add_executor_flags,
    add_isolation_flag,
    add_json,
    add_root,
    cancel_on_signals,
    context,
    positive_float,
    print_json,
    require_harness,
    warn,
)


def register_run_all(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = group.add_parser(
        "run-all", help="run the mission on several runtimes and compare their diffs"
    )
    parser.add_argument("mission_id", metavar="ID")
    parser.add_argument(
        "--runtimes",
        metavar="A,B*N",
        help="default: every active manifest; NAME*N runs NAME N times, each in its own sandbox",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run each runtime N times (best of N), each judged: NAME.1 … NAME.N in the report",
    )
    parser.add_argument(
        "--agree-min",
        type=int,
        default=None,
        metavar="N",
        help="the consensus patch: hunks at least N runtimes made (default: a majority of "
        "those that succeeded)",
    )
    parser.add_argument("--serial", action="store_true", help="one runtime after another")
    parser.add_argument(
        "--force",
        action="store_true",
        help="run even where a runtime lacks capabilities the mission needs",
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=None,
        metavar="S",
        help="stop each agent after S seconds (default: no limit)",
    )
    add_isolation_flag(parser)
    add_executor_flags(parser)
    add_root(parser)
    add_json(parser)
    parser.set_defaults(handler=handle_run_all)


def handle_run_all(args: argparse.Namespace) -> int:
    from uh_core.adapters.manifests import load_all_manifests, load_manifest
    from uh_core.missions import load_mission
    from uh_core.runall.repeat import check_repeat, parse_runtimes, repeated
    from uh_core.runall.report import console_lines
    from uh_core.runall.run_all import RunAllOptions, run_all
    from uh_core.runtime.run import CancelToken

    ctx = context(args)
    require_harness(ctx)
    repeat = check_repeat(args.repeat)
    if args.agree_min is not None and args.agree_min < 1:
        from uh_core.errors import UsageError

        raise UsageError(
            f"--agree-min {args.agree_min}: at least one runtime must have made a hunk",
            fix="--agree-min 2",
        )
    mission = load_mission(ctx.layout, args.mission_id).mission
    if args.runtimes:
        asked = parse_runtimes(args.runtimes, repeat)
        chosen = [(load_manifest(ctx.layout, name), count) for name, count in asked]
    else:
        loaded, broken = load_all_manifests(ctx.layout)
        chosen = [(m, repeat) for m in loaded if m.active]
        for adapter_id, error in broken.items():
            warn(f"adapter {adapter_id} skipped: {error.one_line()}")
    runs = repeated(chosen)
    manifests = [manifest for manifest, _ in runs]
    token = CancelToken()

    with cancel_on_signals(token):
        options = RunAllOptions(
            serial=args.serial, force=args.force, timeout_s=args.timeout,
            isolation=args.isolation, executor=args.executor or "local",
            ray_address=args.ray_address,
            placed_as={m.id: runtime for m, runtime in runs if m.id != runtime},
            agree_min=args.agree_min,
        )  # fmt: skip
        comparison = run_all(ctx.layout, mission, manifests, options, token)
    report = ctx.layout.rel(ctx.layout.mission_dir(mission.id) / "runtime-comparison.md")
    if ctx.json:
        print_json(comparison.model_dump(mode="json"))
    else:
        print("\n".join(console_lines(comparison, report)))
    if token.reason is not None:
        return EXIT_INTERRUPTED
    return EXIT_OK if comparison.status == "agreement" else EXIT_NOT_PASSED
