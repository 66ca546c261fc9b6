"""``uh-core mission steer ID "message" [--file F] [--by NAME]``: a message to the agent
working on a mission now, delivered by its run (``uh_core.harness.steer``)."""

from __future__ import annotations

import argparse

from uh_core.cli.common import (
    EXIT_OK,
    add_message_args,
    context,
    message_of,
    print_json,
    require_harness,
)


def register_steer(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    steer = group.add_parser(
        "steer",
        help="send a message to the agent working on a mission now: its session continues "
        "with it in the same sandbox when its turn ends",
    )
    add_message_args(steer, "message")
    steer.add_argument(
        "--runtime", metavar="NAME", help="the runtime to steer when several work on it (run-all)"
    )
    steer.set_defaults(handler=handle_steer)


def handle_steer(args: argparse.Namespace) -> int:
    from uh_core.harness.steer import send_steering

    ctx = context(args)
    require_harness(ctx)
    example = 'uh-core mission steer {id} "what the agent should do now"'
    mission_id, text, by = message_of(args, ctx.layout, example)
    sent = send_steering(ctx.layout, mission_id, text, by, args.runtime)
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
