"""``uh-core mission steer ID "message" [--file F] [--by NAME]``: a message to the agent
working on a mission now, delivered by its run (``uh_core.harness.steer``)."""

from __future__ import annotations

import argparse

from uh_core.cli.common import (
    EXIT_OK,
    add_json,
    add_root,
    context,
    print_json,
    read_text,
    require_harness,
)


def register_steer(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    steer = group.add_parser(
        "steer",
        help="send a message to the agent working on a mission now: its session continues "
        "with it in the same sandbox when its turn ends",
    )
    steer.add_argument("mission_id", metavar="ID")
    steer.add_argument("text", nargs="?", metavar="TEXT", help="the message (or --file)")
    steer.add_argument("--file", metavar="F", help="read the message from F (`-`: standard input)")
    steer.add_argument(
        "--by", metavar="NAME", help="who sends it (default: the repository's git user.name)"
    )
    add_json(steer)
    add_root(steer)
    steer.set_defaults(handler=handle_steer)


def handle_steer(args: argparse.Namespace) -> int:
    from uh_core.git import identity_config
    from uh_core.harness.steer import send_steering
    from uh_core.ids import check_id

    ctx = context(args)
    require_harness(ctx)
    mission_id = check_id(args.mission_id, "mission")
    example = f'uh-core mission steer {mission_id} "what the agent should do now"'
    text = read_text(args.text, args.file, example)
    by = args.by or identity_config(ctx.layout.root)["user.name"]
    sent = send_steering(ctx.layout, mission_id, text, by)
    if args.json:
        print_json(
            {
                "mission_id": sent.mission_id,
                "run_id": sent.run_id,
                "runtime": sent.runtime,
                "delivery": sent.delivery,
                "event": sent.event.model_dump(mode="json"),
            }
        )
    else:
        print(sent.line())
    return EXIT_OK
