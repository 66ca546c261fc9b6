"""``uh-core sandbox list | discard ID``."""

from __future__ import annotations

import argparse

from uh_core.cli.common import EXIT_OK, add_json, add_root, context, print_json, require_harness


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("sandbox", help="list and discard sandboxes (git worktrees)")
    group = parser.add_subparsers(dest="sandbox_command", metavar="ACTION")
    group.required = True
    listing = group.add_parser("list", help="sandboxes from the index")
    add_root(listing)
    add_json(listing)
    listing.set_defaults(handler=handle_list)
    discard = group.add_parser(
        "discard", help="remove a sandbox's worktree and index entry (its uncommitted work is lost)"
    )
    discard.add_argument("sandbox_id", metavar="ID")
    add_root(discard)
    add_json(discard)
    discard.set_defaults(handler=handle_discard)


def handle_list(args: argparse.Namespace) -> int:
    from uh_core.sandbox.worktree import list_sandboxes

    ctx = context(args)
    require_harness(ctx)
    entries = list_sandboxes(ctx.layout)
    if ctx.json:
        print_json({"sandboxes": [e.model_dump(mode="json") for e in entries]})
        return EXIT_OK
    if not entries:
        print("no sandboxes")
        return EXIT_OK
    width = max(len(e.id) for e in entries)
    print(f"{'ID':<{width}}  {'MISSION':<20}  {'RUNTIME':<12}  {'BASE':<10}  STATUS")
    for e in entries:
        print(
            f"{e.id:<{width}}  {e.mission_id:<20}  {e.runtime or '-':<12}  "
            f"{e.base_commit[:10]:<10}  {e.status}"
        )
    return EXIT_OK


def handle_discard(args: argparse.Namespace) -> int:
    from uh_core.errors import SandboxError
    from uh_core.runtime import active
    from uh_core.sandbox.worktree import discard_sandbox, get_sandbox

    ctx = context(args)
    require_harness(ctx)
    entry = get_sandbox(ctx.layout, args.sandbox_id)
    for _path, run in active.active_runs(ctx.layout, entry.mission_id):
        if run.sandbox_id == entry.id and active.runner_alive(run.runner_pid, run.runner_start):
            raise SandboxError(
                f"sandbox {entry.id} is in use by a running {run.runtime} run",
                fix=f"cancel it first: uh-core mission cancel {entry.mission_id}",
            )
    entry = discard_sandbox(ctx.layout, args.sandbox_id)
    if ctx.json:
        print_json({"discarded": entry.id, "worktree": entry.worktree})
    else:
        print(f"discarded {entry.id} ({entry.worktree})")
    return EXIT_OK
