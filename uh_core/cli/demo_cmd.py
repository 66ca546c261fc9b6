"""``uh-core demo [DIR]``: build the offline demo workspace and run the main job on it."""

from __future__ import annotations

import argparse
from pathlib import Path

from uh_core.cli.common import EXIT_OK, add_json, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "demo",
        help="build a self-contained demo repository and verify its missions",
        description="Build a git repository with a small Python project and missions "
        "(no network, no API key), then verify every mission. DIR defaults to ./uh-demo; "
        "an earlier demo there is rebuilt, any other non-empty directory is refused.",
    )
    parser.add_argument("directory", nargs="?", default="uh-demo", metavar="DIR")
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from uh_core.demo.build import build_demo
    from uh_core.missions import load_mission
    from uh_core.verify.report import render
    from uh_core.verify.runner import VerifyOptions, verify_mission
    from uh_core.verify.synthetic import synthetic_criteria

    demo = build_demo(Path(args.directory))
    layout = demo.layout
    results = []
    if not args.json:
        print(f"demo repository: {layout.root}\n")
    for mission_id in demo.missions:
        mission = load_mission(layout, mission_id).mission
        options = VerifyOptions(timeout_s=60)
        options.synthetic = synthetic_criteria(layout, mission)
        result = verify_mission(layout, mission, options)
        results.append(result)
        if not args.json:
            print(render(result, layout.rel(layout.verification_file(mission_id))) + "\n")
    if args.json:
        print_json(
            {
                "root": str(layout.root),
                "missions": {r.mission_id: r.status for r in results},
            }
        )
        return EXIT_OK
    root = layout.root
    print("Look next:")
    print(f"  uh-core --root {root} mission list")
    print(f"  uh-core --root {root} tail divide")
    print(f"  cat {root}/.harness/missions/divide/verification.yaml")
    print(f"  uh --root {root}")
    return EXIT_OK
