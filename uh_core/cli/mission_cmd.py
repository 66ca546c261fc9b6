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


def _verdict(path: Path) -> tuple[str | None, str | None]:
    """(status, finished_at) of the latest verification.yaml, read through its model."""
    from uh_core.compat.readers import load_verification
    from uh_core.errors import UhError

    if not path.is_file():
        return None, None
    try:
        result = load_verification(path)
    except UhError:
        return "unreadable", None
    return result.status, result.finished_at


def _promotion(layout: Any, mission_id: str) -> Any:
    """The latest decision (None when none, or when promotion.yaml does not parse)."""
    from uh_core.errors import UhError
    from uh_core.promote.record import read_promotion

    try:
        return read_promotion(layout, mission_id)
    except UhError:
        return None


def _list_row(layout: Any, mission_id: str, probe: Any) -> tuple[dict[str, Any], bool]:
    """One mission's row of ``mission list`` from its files, and whether it may be kept in
    the derived index (nothing runs)."""
    from uh_core.errors import UhError
    from uh_core.events.observe import MissionObserver
    from uh_core.missions import load_mission
    from uh_core.promote.record import latest_verdict
    from uh_core.verify.synthetic import planned
    from uh_core.workspace.liveness import verify_lost

    try:
        mission = load_mission(layout, mission_id).mission
    except UhError as exc:
        row: dict[str, Any] = {"id": mission_id, "title": None, "status": "invalid"}
        row |= {"last_verdict": None}
        row |= {"verified_at": None, "criteria": 0, "declared_criteria": 0, "promotion": None}
        return row | {"error": exc.one_line()}, False
    verdict, at = _verdict(layout.verification_file(mission.id))
    observer = MissionObserver(mission.id, layout.mission_events(mission.id))
    observer.poll()
    running = observer.state.running
    if running:
        gone = verify_lost(probe, observer.state)  # its process died: not running
        verdict = "running" if gone is None else "interrupted"
        at = at if gone is None else gone.seen or at
    record = _promotion(layout, mission.id)
    declared = len(mission.criteria())
    row = {
        "id": mission.id,
        "title": mission.display_title,
        "status": mission.status,
        # the promotion onto this branch, until a verification after it
        "last_verdict": latest_verdict(verdict, at, record)[0],
        "verified_at": at,
        "criteria": declared + len(planned(mission)),  # as verify and the dashboard
        "declared_criteria": declared,
        "promotion": None
        if record is None
        else {
            "decision": record.decision,
            "at": record.promoted_at,
            "commit": record.commit,
            "verification_status": record.verification_status,
        },
        "error": None,
    }
    return row, not running and verdict != "unreadable"


def handle_list(args: argparse.Namespace) -> int:
    """Each mission's row from the derived index when its files are as they were
    (``uh_core.workspace.index``), else from its files (and kept there)."""
    import json

    from uh_core.procid import Probe
    from uh_core.workspace.index import open_index
    from uh_core.workspace.mission_rows import inputs_signature

    ctx = context(args)
    require_harness(ctx)
    layout = ctx.layout
    index = open_index(layout)
    stored = index.entries("mission-list")
    rows: list[dict[str, Any]] = []
    broken: dict[str, str] = {}
    probe = Probe()
    for mission_id in layout.mission_ids():
        key = inputs_signature(layout, mission_id)
        found = stored.get(mission_id)
        row: dict[str, Any] | None = None
        if found is not None and found[0] == key:
            try:
                row = json.loads(found[1])
            except ValueError:
                row = None
        if not isinstance(row, dict) or row.get("id") != mission_id:
            row, keep = _list_row(layout, mission_id, probe)
            if keep and inputs_signature(layout, mission_id) == key:
                index.put("mission-list", mission_id, key, json.dumps(row))
        if row["error"]:
            broken[mission_id] = row["error"]
        rows.append(row)
    index.close()
    rows.sort(key=lambda row: row["id"])
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
