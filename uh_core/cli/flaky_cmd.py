"""``uh-core flaky list | clear ID``: the flaky register, ``.harness/flaky.yaml``."""

from __future__ import annotations

import argparse

from uh_core.cli.common import EXIT_OK, add_json, add_root, context, print_json, require_harness


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "flaky", help="criteria whose verdict changed on the same tree (blocked while registered)"
    )
    group = parser.add_subparsers(dest="flaky_command", metavar="ACTION")
    group.required = True
    listing = group.add_parser("list", help="every registered criterion with its evidence")
    add_root(listing)
    add_json(listing)
    listing.set_defaults(handler=handle_list)
    clear = group.add_parser("clear", help="remove one (MISSION/CRITERION): it is judged again")
    clear.add_argument("entry_id", metavar="ID")
    add_root(clear)
    add_json(clear)
    clear.set_defaults(handler=handle_clear)


def handle_list(args: argparse.Namespace) -> int:
    from uh_core.verify.flaky import read_register, register_path

    ctx = context(args)
    require_harness(ctx)
    entries = read_register(register_path(ctx.layout.harness)).entries
    if ctx.json:
        print_json({"flaky": [e.model_dump(mode="json") for e in entries]})
        return EXIT_OK
    if not entries:
        print("no flaky criteria registered")
        return EXIT_OK
    for e in entries:
        print(f"{e.id}  {e.source}: {' → '.join(e.runs)}  registered {e.registered_at}")
        for path in e.evidence:
            print(f"    evidence: {path}")
    return EXIT_OK


def handle_clear(args: argparse.Namespace) -> int:
    from uh_core.verify.flaky import clear, register_path

    ctx = context(args)
    require_harness(ctx)
    entry = clear(register_path(ctx.layout.harness), args.entry_id)
    if ctx.json:
        print_json({"cleared": entry.model_dump(mode="json")})
    else:
        print(f"cleared {entry.id}: it is judged again by the next verify")
    return EXIT_OK
