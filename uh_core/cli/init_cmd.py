"""``uh-core init``: create ``.harness/`` (idempotent)."""

from __future__ import annotations

import argparse

from uh_core.cli.common import EXIT_OK, add_json, add_root, context, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "init",
        help="create .harness/ (idempotent)",
        description="Create .harness/ with project.yaml, adapters/, missions/, "
        "sandboxes/index.yaml and a .gitignore for generated files. Safe to run again.",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write project.yaml and the built-in adapter manifests again (nothing else)",
    )
    add_root(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from uh_core.cli.next_steps import after_init, render
    from uh_core.init import init_project

    ctx = context(args)
    result = init_project(ctx.layout, force=args.force)
    steps = after_init(ctx.layout)
    if ctx.json:
        print_json(
            {
                "root": str(ctx.root),
                "created": result.created,
                "updated": result.updated,
                "next": steps,
            }
        )
        return EXIT_OK
    if result.changed:
        print(f"initialized {ctx.layout.rel(ctx.layout.harness)}/ in {ctx.root}")
        for item in result.created:
            print(f"  created {item}")
        for item in result.updated:
            print(f"  updated {item}")
    else:
        print(f"already initialized: {ctx.layout.harness}")
    for line in render(steps):
        print(line)
    return EXIT_OK
