"""``uh-core mission show ID``: one mission with its last verdict (either tool's files)."""

from __future__ import annotations

import argparse
from typing import Any

from uh_core.cli.common import EXIT_OK, add_json, add_root, context, print_json, require_harness


def register_show(group: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = group.add_parser("show", help="one mission with its last verdict")
    parser.add_argument("mission_id", metavar="ID")
    add_root(parser)
    add_json(parser)
    parser.set_defaults(handler=handle_show)


def show(layout: Any, mission_id: str) -> dict[str, Any]:
    from uh_core.compat.readers import load_verification, read_ts_runs
    from uh_core.missions import load_mission
    from uh_core.promote.record import read_promotion

    loaded = load_mission(layout, mission_id)  # unknown or invalid: exit 2 naming it
    mission = loaded.mission
    vpath = layout.verification_file(mission_id)
    result = load_verification(vpath, layout.rel(vpath)) if vpath.is_file() else None
    by_id = {ac.id: ac for ac in result.acceptance_criteria} if result else {}
    criteria = []
    for ac in mission.criteria():
        row = by_id.get(ac.id)
        criteria.append(
            {
                "id": ac.id,
                "severity": ac.severity,
                "description": ac.description,
                "status": row.status if row else None,
                "exit_code": row.exit_code if row else None,
            }
        )
    record = read_promotion(layout, mission_id)
    runs = read_ts_runs(layout, mission_id)
    return {
        "id": mission.id,
        "title": mission.display_title,
        "status": mission.status,
        "objective": mission.display_objective,
        "verdict": result.status if result else None,
        "verified_at": result.finished_at if result else None,
        "criteria": criteria,
        "findings": [f"{f.severity}: {f.message}" for f in result.findings] if result else [],
        "promotion": {
            "decision": record.decision,
            "by": record.approved_by,
            "at": record.promoted_at,
        }
        if record
        else None,
        "runs": [
            {"run_id": r.run_id, "status": r.status, "runtime": r.runtime, "verdict": r.verdict}
            for r in runs.runs
        ],
        "warnings": loaded.warnings + list(runs.problems),
    }


def handle_show(args: argparse.Namespace) -> int:
    ctx = context(args)
    require_harness(ctx)
    data = show(ctx.layout, args.mission_id)
    if ctx.json:
        print_json(data)
        return EXIT_OK
    print(f"{data['id']}: {data['title'] or '-'} [{data['status']}]")
    if data["objective"]:
        print(f"objective: {' '.join(str(data['objective']).split())}")
    verdict = data["verdict"] or "never verified"
    print(f"verdict: {verdict}" + (f" ({data['verified_at']})" if data["verified_at"] else ""))
    for ac in data["criteria"]:
        print(f"  {ac['status'] or '-':<10} {ac['id']} ({ac['severity']}): {ac['description']}")
    for line in data["findings"]:
        print(f"  {line}")
    if data["promotion"]:
        p = data["promotion"]
        print(f"promotion: {p['decision']} by {p['by']} at {p['at']}")
    for run in data["runs"]:
        extra = f", verdict {run['verdict']}" if run["verdict"] else ""
        print(f"run {run['run_id']}: {run['status']} on {run['runtime'] or '-'}{extra}")
    return EXIT_OK
