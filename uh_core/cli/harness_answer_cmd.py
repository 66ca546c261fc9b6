"""``uh-core harness answer ID "hint" [--file F] [--by NAME]``: answer a mission handed over as
``blocked``; the next ``harness run`` continues it with the answer (``uh_core.harness.answer``)."""

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


def register_answer(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    answer = actions.add_parser(
        "answer",
        help="answer a mission handed over as blocked: the next `harness run` continues it "
        "from its last round with the answer in the prompt",
    )
    answer.add_argument("mission_id", metavar="ID")
    answer.add_argument("text", nargs="?", metavar="TEXT", help="the answer (or --file)")
    answer.add_argument("--file", metavar="F", help="read the answer from F (`-`: standard input)")
    answer.add_argument(
        "--by", metavar="NAME", help="who answers (default: the repository's git user.name)"
    )
    add_json(answer)
    add_root(answer)
    answer.set_defaults(handler=handle_answer)


def handle_answer(args: argparse.Namespace) -> int:
    from uh_core.git import identity_config
    from uh_core.harness.answer import record_answer
    from uh_core.ids import check_id

    ctx = context(args)
    require_harness(ctx)
    mission_id = check_id(args.mission_id, "mission")
    text = read_text(
        args.text, args.file, f'uh-core harness answer {mission_id} "what the agent should do"'
    )
    by = args.by or identity_config(ctx.layout.root)["user.name"]
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
