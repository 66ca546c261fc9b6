"""``uh-core mission list | validate``; dry-run, run and cancel live in mission_run_cmd."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from uh_core.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    add_json,
    add_root,
    context,
    print_json,
    require_harness,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("mission", help="list and validate missions")
    group = parser.add_subparsers(dest="mission_command", metavar="ACTION")
    group.required = True

    listing = group.add_parser("list", help="missions with status and last verdict")
    add_root(listing)
    add_json(listing)
    listing.set_defaults(handler=handle_list)

    validate = group.add_parser(
        "validate",
        help="schema-check mission files; every problem with file, line, field",
        description="Validate missions by id (default: all) or by file (--file). "
        "Exit 0 when every one is valid (warnings allowed), 2 otherwise.",
    )
    validate.add_argument("mission_ids", nargs="*", metavar="ID")
    validate.add_argument(
        "--file",
        dest="files",
        action="append",
        default=[],
        metavar="PATH",
        help="validate a mission file anywhere (repeatable)",
    )
    validate.add_argument(
        "--strict",
        action="store_true",
        help="what the TypeScript uh would reject is an error, not a warning",
    )
    add_root(validate)
    add_json(validate)
    validate.set_defaults(handler=handle_validate, all_problems=True)

    from uh_core.cli.mission_new_cmd import register_new
    from uh_core.cli.mission_run_cmd import register_actions
    from uh_core.cli.mission_show_cmd import register_show
    from uh_core.cli.runall_cmd import register_run_all

    register_actions(group)
    register_run_all(group)
    register_show(group)
    register_new(group)


def handle_list(args: argparse.Namespace) -> int:
    """Each mission's row (``uh_core.workspace.list_rows``: from the derived index when its
    files are as they were, else from its files)."""
    from uh_core.workspace.list_rows import mission_list

    ctx = context(args)
    require_harness(ctx)
    rows, broken = mission_list(ctx.layout)
    if ctx.json:
        print_json({"root": str(ctx.root), "missions": rows})
        return EXIT_OK
    if not rows:
        print(f"no missions under {ctx.layout.rel(ctx.layout.missions_dir)}/")
        return EXIT_OK
    width = max(len(row["id"]) for row in rows)
    print(f"{'ID':<{width}}  {'STATUS':<19}  {'VERDICT':<10}  TITLE")
    for row in rows:
        title = row["title"] or row["error"]
        verdict = row["last_verdict"] or "-"
        print(f"{row['id']:<{width}}  {row['status']:<19}  {verdict:<10}  {title}")
    for mission_id, error in broken.items():
        sys.stderr.write(f"uh-core: warning: mission {mission_id}: {error}\n")
    return EXIT_OK


def handle_validate(args: argparse.Namespace) -> int:
    from uh_core.errors import UhError, ValidationError
    from uh_core.missions import LoadedMission, load_mission, read_mission_file

    ctx = context(args)
    require_harness(ctx)
    targets: list[tuple[str, Any]] = []
    if args.mission_ids or args.files:
        targets += [("id", mission_id) for mission_id in args.mission_ids]
        targets += [("file", path) for path in args.files]
    else:
        targets += [("id", mission_id) for mission_id in ctx.layout.mission_ids()]
    reports: list[dict[str, Any]] = []
    for kind, target in targets:
        label = target
        try:
            loaded: LoadedMission = (
                load_mission(ctx.layout, target)
                if kind == "id"
                else read_mission_file(Path(target))
            )
            label = loaded.display
            strict = bool(getattr(args, "strict", False)) and bool(loaded.ts_warnings)
            reports.append(
                {
                    "target": label,
                    "id": loaded.mission.id,
                    "valid": not strict,
                    "errors": loaded.ts_warnings if strict else [],
                    "warnings": loaded.warnings
                    + ([] if strict else loaded.ts_warnings)
                    + _advice(loaded, ctx.layout.root),
                }
            )
        except ValidationError as exc:
            reports.append(
                {
                    "target": label,
                    "id": None,
                    "valid": False,
                    "errors": exc.problems,
                    "warnings": [],
                }
            )
        except UhError as exc:
            reports.append(
                {
                    "target": label,
                    "id": None,
                    "valid": False,
                    "errors": [exc.one_line()],
                    "warnings": [],
                }
            )
    ok = all(report["valid"] for report in reports)
    if ctx.json:
        print_json({"valid": ok, "missions": reports})
        return EXIT_OK if ok else EXIT_BAD_INPUT
    for report in reports:
        for line in report["errors"]:
            sys.stderr.write(f"uh-core: error: {' '.join(line.split())}\n")
        for line in report["warnings"]:
            sys.stderr.write(f"uh-core: warning: {' '.join(line.split())}\n")
        if report["valid"]:
            print(f"ok {report['id']} ({report['target']})")
    if not reports:
        print("no missions to validate")
    return EXIT_OK if ok else EXIT_BAD_INPUT


def _advice(loaded: Any, root: Path) -> list[str]:
    """Valid, but verify will not be able to pass it as written."""
    from uh_core.verify.promises import unverified_promises

    notes = [  # block criteria without a command: the warning below says more
        f"{loaded.display}: unverified promise: {promise}"
        for promise in unverified_promises(loaded.mission, root, block=False)
    ]
    for ac in loaded.mission.criteria():
        if ac.severity == "block" and ac.check_command is None:
            notes.append(
                f"{loaded.display}: acceptance criterion {ac.id} is severity block without a "
                "check_command: verify will report the mission blocked"
            )
    from uh_core.promote.policy import policy_typo

    typo = policy_typo(loaded.mission)
    if typo:
        notes.append(f"{loaded.display}: {typo}")
    return notes
