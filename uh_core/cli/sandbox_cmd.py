"""``uh-core sandbox list | status ID | discard ID… | discard --mission ID | discard --all``."""

from __future__ import annotations

import argparse
from typing import Any

from uh_core.cli.common import (
    EXIT_OK,
    add_isolation_flag,
    add_json,
    add_root,
    context,
    print_json,
    require_harness,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "sandbox",
        help="list and discard sandboxes (each a repository of its own, outside your work tree)",
    )
    group = parser.add_subparsers(dest="sandbox_command", metavar="ACTION")
    group.required = True
    listing = group.add_parser("list", help="sandboxes from the index")
    add_root(listing)
    add_json(listing)
    listing.set_defaults(handler=handle_list)
    discard = group.add_parser(
        "discard",
        help="remove a sandbox's repository and index entry (its uncommitted work is lost)",
    )
    discard.add_argument("sandbox_ids", metavar="ID", nargs="*", help="one or more sandbox ids")
    which = discard.add_mutually_exclusive_group()
    which.add_argument(
        "--mission", metavar="ID", help="every sandbox of this mission not in use by a run"
    )
    which.add_argument(
        "--all", action="store_true", help="every sandbox not in use by a run (the index's)"
    )
    discard.add_argument(
        "--keep-branch",
        action="store_true",
        help="the TypeScript uh's flag: accepted; uh never deletes a branch of your repository",
    )
    add_root(discard)
    add_json(discard)
    discard.set_defaults(handler=handle_discard)
    shell = group.add_parser(
        "shell",
        help="your shell in a sandbox's tree, confined as its agent is; what you change is "
        "recorded as yours, apart from the agent's",
    )
    shell.add_argument("sandbox_id", metavar="ID")
    shell.add_argument(
        "--command", metavar="CMD", help="run CMD (sh -c) instead of an interactive shell"
    )
    shell.add_argument(
        "--by", metavar="NAME", help="who edits (default: the repository's git user.name)"
    )
    add_isolation_flag(shell)
    add_root(shell)
    add_json(shell)
    shell.set_defaults(handler=handle_shell)
    status = group.add_parser(
        "status", help="one sandbox: its entry, whether its tree exists, what changed, its verify"
    )
    status.add_argument("sandbox_id", metavar="ID")
    add_root(status)
    add_json(status)
    status.set_defaults(handler=handle_status)


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


def _in_use(layout: Any, entry: Any, held: dict[str, str]) -> tuple[str, str] | None:
    """The running run using ``entry`` (what to call it, and how to stop it), or None.
    ``held``: the sandboxes live harness runs hold (``active.harness_sandboxes``)."""
    from uh_core.runtime import active

    if entry.id in held:
        return "harness", f"cancel it first: uh-core harness cancel {held[entry.id]}"
    for _path, run in active.active_runs(layout, entry.mission_id):
        if run.sandbox_id == entry.id and active.runner_alive(run.runner_pid, run.runner_start):
            return run.runtime or "a", f"cancel it first: uh-core mission cancel {entry.mission_id}"
    return None


def handle_discard(args: argparse.Namespace) -> int:
    from uh_core.errors import SandboxError, UsageError
    from uh_core.sandbox.worktree import discard_sandbox, get_sandbox, list_sandboxes

    ctx = context(args)
    require_harness(ctx)
    chosen = args.mission is not None or args.all
    if chosen == bool(args.sandbox_ids):
        raise UsageError(
            "name the sandboxes to discard: ID…, --mission ID or --all (not both)",
            fix="uh-core sandbox list shows them",
        )
    if chosen:  # every idle one; those in use are left and said
        entries = [
            e for e in list_sandboxes(ctx.layout) if args.all or e.mission_id == args.mission
        ]
    else:  # each named one must exist and be idle: checked before any is discarded
        entries = [get_sandbox(ctx.layout, sandbox_id) for sandbox_id in args.sandbox_ids]
    from uh_core.runtime.active import harness_sandboxes

    done: list[dict[str, str]] = []
    left: list[dict[str, str]] = []
    held = harness_sandboxes(ctx.layout)
    for entry in entries:
        found = _in_use(ctx.layout, entry, held)
        if found is None:
            continue
        runtime, fix = found
        if not chosen:
            raise SandboxError(f"sandbox {entry.id} is in use by a running {runtime} run", fix=fix)
        left.append({"id": entry.id, "in_use_by": runtime})
    busy = {item["id"] for item in left}
    for entry in entries:
        if entry.id not in busy:
            gone = discard_sandbox(ctx.layout, entry.id)
            done.append({"discarded": gone.id, "worktree": gone.worktree})
    if ctx.json:
        print_json(
            done[0] if len(done) == 1 and not chosen else {"discarded": done, "in_use": left}
        )
        return EXIT_OK
    for item in done:
        print(f"discarded {item['discarded']} ({item['worktree']})")
    for item in left:
        print(f"kept {item['id']}: in use by a running {item['in_use_by']} run")
    if chosen and not done and not left:
        print("no sandboxes to discard")
    return EXIT_OK


def sandbox_status(layout: Any, sandbox_id: str) -> dict[str, Any]:
    """The entry, whether its work tree is there, the paths changed in it (git status)."""
    from uh_core.errors import UhError
    from uh_core.git import git
    from uh_core.sandbox.worktree import entry_path, get_sandbox

    entry = get_sandbox(layout, sandbox_id)
    path = entry_path(layout, entry)
    changed: list[str] | None = None
    error = None
    if path.is_dir():
        try:
            out = git(path, "status", "--porcelain=v1", "-z", "--untracked-files=all")
            changed = sorted({item[3:] for item in out.split("\0") if len(item) > 3})
        except UhError as exc:
            error = exc.one_line()
    from uh_core.sandbox.human import read_edits

    try:
        human = [e.model_dump(mode="json") for e in read_edits(layout, entry.id).edits]
    except UhError as exc:
        human, error = [], error or exc.one_line()
    return {
        **entry.model_dump(mode="json", exclude_none=True),
        "worktree_path": str(path),
        "exists": path.is_dir(),
        "changed": changed,
        "human_edits": human,  # what a human changed here (sandbox shell), apart from its agent
        "error": error,
    }


def handle_status(args: argparse.Namespace) -> int:
    ctx = context(args)
    require_harness(ctx)
    data = sandbox_status(ctx.layout, args.sandbox_id)
    if ctx.json:
        print_json(data)
        return EXIT_OK
    print(
        f"{data['id']}: {data['status']} (mission {data['mission_id']}, "
        f"runtime {data.get('runtime') or '-'})"
    )
    print(f"worktree: {data['worktree_path']}" + ("" if data["exists"] else " (missing)"))
    print(
        f"base: {data['base_commit']}"
        + (f", branch {data['branch']}" if data.get("branch") else "")
    )
    if data.get("verify_status"):
        print(f"verify: {data['verify_status']} ({data.get('verified_at') or '-'})")
    if data["changed"] is not None:
        print(f"changed: {len(data['changed'])} path(s)")
        for item in data["changed"]:
            print(f"  {item}")
    for edit in data["human_edits"]:
        print(
            f"by hand: {edit['by']} at {edit['at']}: {len(edit['files'])} file(s) "
            f"(+{edit['added']} -{edit['removed']}) {edit['patch']}"
        )
    if data["error"]:
        print(f"error: {data['error']}")
    return EXIT_OK


def handle_shell(args: argparse.Namespace) -> int:
    """``sandbox shell ID``: refused while a run works in the sandbox; what changed is said and
    recorded (exit 0 once the shell ran: its own exit code is said, not taken as uh-core's)."""
    import os

    from uh_core.errors import SandboxError
    from uh_core.git import identity_config
    from uh_core.harness.cancel import on_mission
    from uh_core.runtime.active import harness_sandboxes
    from uh_core.sandbox.human import shell
    from uh_core.sandbox.worktree import get_sandbox
    from uh_core.security.guard import resolve

    ctx = context(args)
    require_harness(ctx)
    entry = get_sandbox(ctx.layout, args.sandbox_id)
    found = _in_use(ctx.layout, entry, harness_sandboxes(ctx.layout))
    working = entry.kind == "harness" and bool(on_mission(ctx.layout, entry.mission_id)[0])
    if found is not None or working:
        who = f"a running {found[0]} run" if found else f"the harness run on {entry.mission_id}"
        raise SandboxError(
            f"sandbox {entry.id} is in use by {who}: a human and an agent never edit one "
            "tree at once",
            fix=f'steer it (`uh-core mission steer {entry.mission_id} "…"`) or let it end',
        )
    argv = (
        ["/bin/sh", "-c", args.command] if args.command else [os.environ.get("SHELL") or "/bin/sh"]
    )
    by = args.by or identity_config(ctx.layout.root)["user.name"]
    outcome = shell(ctx.layout, entry, argv, by, resolve(args.isolation))
    edit = outcome.edit
    if ctx.json:
        print_json(
            {
                "sandbox_id": entry.id,
                "exit_code": outcome.exit_code,
                "edit": edit.model_dump(mode="json") if edit is not None else None,
            }
        )
    elif edit is None:
        print(f"{entry.id}: nothing changed (the shell exited {outcome.exit_code})")
    else:
        print(
            f"{entry.id}: {edit.by} changed {len(edit.files)} file(s) (+{edit.added} "
            f"-{edit.removed}), recorded as a human's edit: {edit.patch} (the shell exited "
            f"{outcome.exit_code})"
        )
    return EXIT_OK  # the shell ran; its own exit code is said, not uh-core's
