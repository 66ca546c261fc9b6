"""``uh-core status [--json]``: the workspace snapshot the dashboard shows, for scripts.

Reads ``.harness/`` through ``uh_core.workspace.Store`` (every log to its end) and prints
the same values the dashboard's views are built from: one line per mission, or with
``--json`` the whole snapshot (missions with criteria, runtimes and harness progress,
sandboxes, harness runs, runtimes available, malformed files). Each harness run carries its
missions by outcome (blocked and errors included), ``judged`` and ``pass_rate``, counted by
``uh_core.harness.rate`` as ``harness report`` and the dashboard count them.
"""

from __future__ import annotations

import argparse
import gc
import sys
from typing import Any

from uh_core.cli.common import EXIT_OK, add_json, add_root, context, require_harness


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "status",
        help="what the dashboard shows, as text or JSON",
        description="Print the workspace as the dashboard sees it: each mission's status, "
        "verdict, criteria and what is running; --json prints the whole snapshot.",
    )
    add_root(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def snapshot_json(snapshot: Any) -> dict[str, Any]:
    """The snapshot as what ``print_json_fast`` serialises: its fields in order, each harness
    run with its counts and rate after its own fields. Everything else stays the snapshot's
    own objects, serialised in one pydantic-core pass (a thousand missions and two thousand
    runs: 6.6 MB), with no copy of it as lists and dicts first."""
    import dataclasses
    from operator import attrgetter

    from uh_core.workspace.state import LedgerView

    names = tuple(f.name for f in dataclasses.fields(LedgerView))
    values = attrgetter(*names)
    harness = snapshot.harness
    runs = [  # the rate's rule, as `harness report` has it
        run if run.problem else dict(zip(names, values(run), strict=True), **run.tally.as_dict())
        for run in harness.ledgers
    ]
    data = _fields(snapshot, harness=_fields(harness, ledgers=runs))
    del data["loaded"]  # the reader's own flag, never printed
    return data


def _fields(view: Any, **replaced: Any) -> dict[str, Any]:
    """A dataclass's fields by name, in order (not copied), some ``replaced``."""
    import dataclasses

    return {
        f.name: replaced[f.name] if f.name in replaced else getattr(view, f.name)
        for f in dataclasses.fields(view)
    }


def green_branch(mission: Any) -> str | None:
    """``green on harness/<id> (harness run R): review it, then promote`` for a mission whose
    latest harness outcome is a pass not promoted yet (``MissionView.green``); None otherwise."""
    run = mission.green
    if run is None:
        return None
    return (
        f"green on {run.branch} (harness run {run.run_id}): review it, then "
        f"uh-core promote {mission.mission_id} --branch {run.branch} --approved-by NAME"
    )


def print_json_fast(data: Any) -> None:
    """``print_json``'s output (indent 2, UTF-8 as is), serialised by pydantic-core."""
    from pydantic_core import to_json

    sys.stdout.flush()
    sys.stdout.buffer.write(to_json(data, indent=2) + b"\n")
    sys.stdout.buffer.flush()


def handle(args: argparse.Namespace) -> int:
    from uh_core.promote.journal import finish_interrupted
    from uh_core.shown import plural
    from uh_core.workspace.store import Store

    gc.freeze()  # the reader's modules too (cli.main froze the parser's)
    ctx = context(args)
    require_harness(ctx)
    finished = finish_interrupted(ctx.layout)  # an interrupted promotion: finished, and said
    if finished is not None:
        print(f"uh-core: {finished}", file=sys.stderr)
    snapshot = Store(ctx.root).settle()
    if ctx.json:
        print_json_fast(snapshot_json(snapshot))
        return EXIT_OK
    out = sys.stdout
    for mission in snapshot.missions:
        judged = [c for c in mission.criteria if c.status not in ("pending", "-")]
        passed = sum(1 for c in judged if c.status == "passed")
        line = (
            f"{mission.mission_id:<24} {mission.status:<10} {mission.verdict.upper():<8} "
            f"{passed}/{len(mission.criteria)} criteria"
        )
        if mission.verdict == "promoted" and judged:  # the verify is older than the landing
            # the counts are that older verify's: said, with how to check what landed
            line += f" before the promotion (uh-core verify {mission.mission_id} checks main now)"
        if mission.live:
            line += f"  ● {mission.live}"
        if mission.badge:
            line += f"  ⚠ {mission.error or '; '.join(mission.problems)}"
        out.write(line + "\n")
        for gone in mission.interrupted:  # running states whose process died
            out.write(f"  {gone}\n")
        if mission.handover:  # handed over: waiting for an answer, or answered
            out.write(f"  {mission.handover}\n")
        green = green_branch(mission)
        if green:  # the gate passed it on its branch: the verdict above is the main checkout's
            out.write(f"  {green}\n")
        if mission.ts_runs:  # the TypeScript uh's newest run here, and the verdict on it
            out.write(f"  {mission.ts_runs[0].line(len(mission.ts_runs))}\n")
    harness = snapshot.harness
    if harness.running:
        where = f" on {harness.running_host}" if harness.running_host else ""
        out.write(f"harness run {harness.running} in progress{where} ({harness.running_budget})\n")
    if harness.interrupted:
        seen = f"; last seen {harness.interrupted_at}" if harness.interrupted_at else ""
        out.write(f"harness run {harness.interrupted} interrupted: its runner is gone{seen}\n")
    live = sum(1 for s in snapshot.sandboxes if s.in_use)
    latest, real = harness.latest, harness.last_judged
    rate = f" (last: pass rate {latest.tally.text()})" if latest is not None else ""
    if latest is not None and real is not None and real is not latest:  # a run with nothing
        rate = f" (last: nothing judged; {real.run_id}: pass rate {real.tally.text()})"
    out.write(
        f"{plural(len(snapshot.missions), 'mission')} · "
        f"{plural(len(snapshot.sandboxes), 'sandbox')} ({live} in use) · "
        f"{plural(len(harness.ledgers), 'harness run')}{rate}\n"
    )
    if snapshot.sandbox_problem:
        out.write(f"⚠ {snapshot.sandbox_problem}\n")
    if snapshot.malformed_lines:
        out.write(f"⚠ {snapshot.malformed_lines} malformed event line(s) skipped\n")
    return EXIT_OK
