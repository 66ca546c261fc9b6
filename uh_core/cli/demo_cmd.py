"""``uh-core demo [DIR]``: build the offline demo workspace and run the main job on it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from uh_core.cli.common import EXIT_OK, add_json, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "demo",
        help="build the offline demo repository and run the main job on it",
        description="Build a git repository with a small Python project, missions and four "
        "scripted runtimes (no network, no API key); verify every mission, run one on all "
        "four runtimes and compare their diffs, then verify each sandbox. DIR defaults to "
        "./uh-demo; an earlier demo there is rebuilt, any other non-empty directory is refused.",
    )
    parser.add_argument("directory", nargs="?", default="uh-demo", metavar="DIR")
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from uh_core.demo.build import build_demo
    from uh_core.demo.job import QA_MISSION, run_demo_job
    from uh_core.runall.report import console_lines
    from uh_core.verify.report import render

    demo = build_demo(Path(args.directory))
    layout = demo.layout
    if demo.rebuilt:  # said, not silent: what was made there (promotions, branches) is gone
        print(
            f"uh-core: rebuilt the earlier demo in {layout.root} from scratch "
            "(its promotions and harness/* branches are gone)",
            file=sys.stderr,
        )
    report = run_demo_job(demo)
    comparison = report.comparison
    assert comparison is not None
    if args.json:
        print_json(
            {
                "root": str(layout.root),
                "missions": {r.mission_id: r.status for r in report.verifications},
                "comparison": comparison.status,
                "groups": [g.model_dump() for g in comparison.groups],
                "sandbox_verification": report.sandbox_verdicts,
            }
        )
        return EXIT_OK
    root = layout.root
    print(f"demo repository: {root}\n")
    print("== verify every mission on the main checkout ==\n")
    for result in report.verifications:
        print(render(result, layout.rel(layout.verification_file(result.mission_id))) + "\n")
    print(f"== {QA_MISSION} on four scripted runtimes, side by side ==\n")
    report_path = layout.rel(layout.mission_dir(QA_MISSION) / "runtime-comparison.md")
    print("\n".join(console_lines(comparison, report_path)) + "\n")
    print(f"== verify {QA_MISSION} in each runtime's sandbox (the TDD gate included) ==\n")
    for row in comparison.runtimes:
        verdict = report.sandbox_verdicts.get(row.runtime, "not run")
        print(f"  {row.runtime:<6} diff {row.diff_hash or '-':<16}  verify: {verdict}")
    print("\nLook next:")
    print(f"  cat {root}/{report_path}")
    print(f"  uh-core --root {root} tail {QA_MISSION}")
    print(f"  uh-core --root {root} sandbox list")
    print(f"  uh --root {root}")
    return EXIT_OK
