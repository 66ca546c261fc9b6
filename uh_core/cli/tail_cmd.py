"""``uh-core tail [ID] [--follow] [--json]``: events as readable lines, or as JSON Lines
(one event, one JSON object, one line: a stream a reader can follow, never one document)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from uh_core.cli.common import EXIT_OK, add_root, context, require_harness
from uh_core.layout import Layout

if TYPE_CHECKING:  # the event models cost a tenth of a second to build: only when read
    from uh_core.models.events import BaseEvent


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "tail",
        help="print events as readable lines (all logs, or one mission's)",
        description="Print the events of one mission (or of every mission and the audit "
        "log, merged by time). --follow keeps printing as events are appended. --json prints "
        "JSON Lines: one JSON object per event, one per line (unlike other commands' --json, "
        "not one document: a tail is a stream).",
    )
    parser.add_argument("mission_id", nargs="?", metavar="ID")
    parser.add_argument("-f", "--follow", action="store_true", help="keep following new events")
    parser.add_argument(
        "-n",
        "--lines",
        type=int,
        default=None,
        metavar="N",
        help="start with only the last N events",
    )
    parser.add_argument("--interval", type=float, default=0.1, help=argparse.SUPPRESS)
    add_root(parser)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print JSON Lines on stdout: each event as one JSON object on its own line",
    )
    parser.set_defaults(handler=handle)


def _sources(layout: Layout, mission_id: str | None) -> list[Path]:
    """Every log to follow; a mission's includes the TypeScript uh's per-run logs
    (``runs/<run>/events.ndjson``)."""
    from uh_core.compat.readers import run_event_logs

    missions = [mission_id] if mission_id else layout.mission_ids()
    paths = [] if mission_id else [layout.audit_log]
    for mid in missions:
        paths += [layout.mission_events(mid), *run_event_logs(layout, mid)]
    return paths


def _ts_audit(layout: Layout, mission_id: str | None) -> list[tuple[BaseEvent, str]]:
    """The TypeScript uh's ``.harness/audit.log`` verdict lines (read once, not followed)."""
    from uh_core.compat.readers import read_audit_log
    from uh_core.models.events import UnknownEvent

    return [
        (UnknownEvent.model_validate(doc), "audit")
        for doc in read_audit_log(layout.harness / "audit.log")
        if mission_id is None or doc["mission_id"] == mission_id
    ]


def handle(args: argparse.Namespace) -> int:
    from uh_core.events.reader import LogTail, seen_before
    from uh_core.events.render import render_line
    from uh_core.missions import load_mission

    ctx = context(args)
    require_harness(ctx)
    if args.mission_id:
        load_mission(ctx.layout, args.mission_id)  # unknown or invalid ids exit 2 here
    as_json = ctx.json

    seen: set[str] = set()  # events written to two logs (promotion.*) are shown once

    def emit(batch: list[tuple[BaseEvent, str]]) -> None:
        batch.sort(key=lambda item: item[0].timestamp)
        for event, source in batch:
            if seen_before(event, seen):
                continue
            if as_json:
                line = json.dumps(event.model_dump(mode="json"), ensure_ascii=False)
            else:
                line = render_line(event, source)
            sys.stdout.write(line + "\n")
        sys.stdout.flush()

    tails: dict[Path, LogTail] = {}

    def poll() -> list[tuple[BaseEvent, str]]:
        for path in _sources(ctx.layout, args.mission_id):
            tails.setdefault(path, LogTail(path))
        batch = []
        for path, tail in tails.items():
            batch += [(event, path.parent.name) for event in tail.poll()]
        return batch

    first = poll() + _ts_audit(ctx.layout, args.mission_id)
    if args.lines is not None:
        first.sort(key=lambda item: item[0].timestamp)
        first = first[-args.lines :] if args.lines > 0 else []
    emit(first)
    while args.follow:
        time.sleep(args.interval)
        emit(poll())
    skipped = sum(tail.malformed for tail in tails.values())
    if skipped:
        sys.stderr.write(f"uh-core: warning: skipped {skipped} malformed line(s)\n")
    return EXIT_OK
