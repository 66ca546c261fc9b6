"""``uh-core mission new [ID] --title T [--criterion 'DESC::CMD']…``: scaffold a mission.

The file it writes is valid for uh and for the TypeScript uh (schema_version, title,
workflow_profile, objective, described criteria): ``mission validate --strict`` passes it.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from uh_core.cli.common import EXIT_OK, add_json, add_root, context, print_json, require_harness

SEPARATOR = "::"


def register_new(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = group.add_parser(
        "new",
        aliases=["create"],  # the TypeScript uh's two names; its flags are accepted as they are
        help="scaffold a mission.yaml from a title and criteria",
        description="Write .harness/missions/<id>/mission.yaml. Each --criterion is "
        f"'DESCRIPTION' or 'DESCRIPTION{SEPARATOR}CHECK COMMAND' (exit 0 = pass); a criterion "
        "without a command is severity warn (nothing can check it). The id defaults to the "
        "title as a slug. An existing mission is kept unless --force.",
    )
    parser.add_argument("mission_id", nargs="?", metavar="ID")
    parser.add_argument("--title", help="required unless asked for in a terminal")
    parser.add_argument("--objective", default=None, help="default: the title")
    parser.add_argument("--workflow", default="staged", help="workflow_profile (default: staged)")
    parser.add_argument("--criterion", action="append", default=[], metavar=f"DESC[{SEPARATOR}CMD]")
    parser.add_argument(
        "--check", action="append", default=[], metavar="NAME=CMD", help="a required check"
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing mission.yaml")
    add_root(parser)
    add_json(parser)
    parser.set_defaults(handler=handle_new)


def slug(title: str) -> str:
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", title.strip().lower()).strip("-._")
    return text[:60].rstrip("-._") or "mission"


def document(
    mission_id: str,
    title: str,
    objective: str | None,
    workflow: str,
    criteria: list[str],
    checks: list[str],
) -> dict[str, Any]:
    from uh_core.errors import UsageError

    acs = []
    for i, text in enumerate(criteria, start=1):
        description, _, command = text.partition(SEPARATOR)
        description, command = description.strip(), command.strip()
        if not description:
            raise UsageError(f"--criterion {text!r}: the description is empty")
        ac: dict[str, Any] = {"id": f"ac-{i}", "description": description}
        if command:
            ac["check_command"] = command
        else:
            ac["severity"] = "warn"  # nothing can check it: it never gates
        acs.append(ac)
    required = []
    for text in checks:
        name, eq, command = text.partition("=")
        if not eq or not name.strip() or not command.strip():
            raise UsageError(f"--check {text!r}: write NAME=COMMAND")
        required.append({"name": name.strip(), "command": command.strip()})
    doc: dict[str, Any] = {
        "schema_version": "uh.mission.v0",
        "id": mission_id,
        "title": title,
        "workflow_profile": workflow,
        "objective": objective or title,
        "status": "pending",
        "acceptance_criteria": acs,
    }
    if required:
        doc["verification"] = {"required_checks": required}
    return doc


def _ask(args: argparse.Namespace) -> None:
    """In a terminal without --title: the title, then criteria one a line (empty ends)."""
    from uh_core.errors import UsageError

    try:
        args.title = input("Title: ").strip()
        if not args.title:
            raise UsageError("a mission needs a title")
        print(f"Criteria, one a line as DESCRIPTION or DESCRIPTION{SEPARATOR}CHECK COMMAND;")
        print("an empty line ends:")
        while line := input("  criterion: ").strip():
            args.criterion.append(line)
    except EOFError:
        if not args.title:
            raise UsageError("a mission needs a title") from None


def handle_new(args: argparse.Namespace) -> int:
    from uh_core.cli.next_steps import after_mission_new, render
    from uh_core.errors import UsageError
    from uh_core.fileio import write_yaml
    from uh_core.ids import check_id
    from uh_core.missions import read_mission_file

    ctx = context(args)
    require_harness(ctx)
    if not args.title:
        if not sys.stdin.isatty():
            raise UsageError("--title is required", fix="pass --title, or run it in a terminal")
        _ask(args)
    mission_id = check_id(args.mission_id or slug(args.title), "mission")
    path = ctx.layout.mission_file(mission_id)
    if path.exists() and not args.force:
        raise UsageError(
            f"mission {mission_id} exists: {ctx.layout.rel(path)}",
            fix="choose another id, or --force to overwrite it",
        )
    doc = document(
        mission_id, args.title, args.objective, args.workflow, args.criterion, args.check
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_yaml(path, doc)
    loaded = read_mission_file(path, ctx.layout.rel(path))  # what was written reads back
    steps = after_mission_new(ctx.layout, mission_id)
    if ctx.json:
        print_json(
            {
                "id": mission_id,
                "path": ctx.layout.rel(path),
                "warnings": loaded.ts_warnings,
                "next": steps,
            }
        )
    else:
        print(f"created {ctx.layout.rel(path)}")
        if not any("check_command" in ac for ac in doc["acceptance_criteria"]) and not args.check:
            print("note: no criterion has a check command: verify will report it blocked")
        for line in render(steps):
            print(line)
    return EXIT_OK
