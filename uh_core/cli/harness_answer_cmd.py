"""``uh-core harness answer ID "hint" [--file F] [--by NAME]``: answer a mission handed over as
``blocked``; the next ``harness run`` continues it with the answer (``uh_core.harness.answer``)."""

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


def register_answer(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    answer = actions.add_parser(
        "answer",
        help="answer a mission handed over as blocked: the next `harness run` continues it "
        "from its last round with the answer in the prompt",
    )
    add_message_args(answer, "answer")
    answer.set_defaults(handler=handle_answer)


def handle_answer(args: argparse.Namespace) -> int:
    from uh_core.harness.answer import record_answer

    ctx = context(args)
    require_harness(ctx)
    example = 'uh-core harness answer {id} "what the agent should do"'
    mission_id, text, by = message_of(args, ctx.layout, example)
    event = record_answer(ctx.layout, mission_id, text, by)
    if args.json:
        print_json(event.model_dump(mode="json"))
    else:
        code = f"{event.code}, " if event.code else ""
        print(
            f"answered {mission_id}'s hand-over ({code}run {event.handover_run}) as {event.by}: "
            f"the next `uh-core harness run` continues harness/{mission_id} from its last "
            "round with the answer in the prompt"
        )
    return EXIT_OK
