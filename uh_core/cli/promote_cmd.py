"""``uh-core promote ID --approved-by NAME [--decision D] [--sandbox SBX | --branch B]
[--change PATH]… [--force] [--note TEXT] [--json]``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from uh_core.cli.common import EXIT_OK, add_json, add_root, context, print_json, require_harness

if TYPE_CHECKING:
    from uh_core.layout import Layout
    from uh_core.models.promotion import PromotionRecord


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "promote",
        help="record the operator's decision on a sandbox or harness branch (and apply it)",
        description="Decide on what an agent produced. `promoted` applies the sandbox's diff "
        "(or the branch's commits) onto the current branch as one commit, only onto a clean "
        "tree and only when it applies cleanly; `rejected` and `deferred` change no code. "
        "Every decision is written to .harness/missions/ID/promotion.yaml and the audit log. "
        "Exit 0 recorded, 1 refused (dirty tree, conflict, unverified without --force), "
        "2 bad input.",
    )
    parser.add_argument("mission_id", metavar="ID")
    parser.add_argument(
        "--approved-by", required=True, metavar="NAME", help="who decides (recorded)"
    )
    parser.add_argument(
        "--decision",
        choices=("promoted", "rejected", "deferred"),
        default="promoted",
        help="default promoted",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--sandbox", metavar="SBX", help="the sandbox to decide on")
    source.add_argument("--branch", metavar="harness/ID", help="the harness branch to decide on")
    parser.add_argument(
        "--change",
        action="append",
        default=[],
        metavar="PATH",
        help="only these changed paths: a file, a directory or a glob (repeatable)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="promote although its verification did not pass (recorded as forced)",
    )
    parser.add_argument(
        "--accept-unconfined",
        action="store_true",
        help="land a green whose checks ran without bubblewrap (recorded)",
    )
    parser.add_argument(
        "--accept-review",
        action="store_true",
        help="land added lines shaped like judge tampering, after reading them (recorded)",
    )
    parser.add_argument("--note", metavar="TEXT", help="why (recorded)")
    add_root(parser)
    add_json(parser)
    parser.set_defaults(handler=handle)


def render(layout: Layout, record: PromotionRecord) -> str:
    where = record.branch if record.source == "branch" else record.sandbox_id
    runtime = f" (runtime {record.runtime})" if record.runtime else ""
    lines = [f"[{record.decision.upper()}] {record.mission_id}  {record.source} {where}{runtime}"]
    if record.commit:
        lines.append(
            f"commit: {record.commit[:12]} on {record.onto_branch} ({len(record.changes)} path(s))"
        )
        if record.mission_status:
            lines.append(f"mission status: {record.mission_status} (in that commit)")
        elif record.change_filter:
            lines.append("mission status: unchanged (only part of the change was promoted)")
    else:
        lines.append(f"no code changed ({len(record.changes)} path(s) covered)")
    forced = " — promoted with --force" if record.forced else ""
    lines.append(f"verification: {record.verification_status}{forced}")
    if record.rejudged:
        lines.append(
            f"judged again before landing: {record.rejudged} ({record.rejudge_isolation}): "
            f"{record.rejudge_detail}"
        )
    if record.accepted_unconfined:
        lines.append(f"accepted unconfined: {record.accepted_unconfined}")
    if record.accepted_review:
        lines.append(f"accepted for review: {len(record.accepted_review)} line(s)")
    lines.append(f"approved by: {record.approved_by}")
    lines.append(f"record: {layout.rel(layout.promotion_file(record.mission_id))}")
    return "\n".join(lines)


def handle(args: argparse.Namespace) -> int:
    from uh_core.promote.decide import PromotionRequest, promote
    from uh_core.promote.journal import finish_interrupted

    ctx = context(args)
    require_harness(ctx)
    finished = finish_interrupted(ctx.layout)
    if finished is not None:
        print(f"uh-core: {finished}", file=sys.stderr)
    request = PromotionRequest(
        mission_id=args.mission_id,
        approved_by=args.approved_by,
        decision=args.decision,
        sandbox_id=args.sandbox,
        branch=args.branch,
        changes=list(args.change),
        force=args.force,
        note=args.note,
        accept_unconfined=args.accept_unconfined,
        accept_review=args.accept_review,
    )
    record = promote(ctx.layout, request)
    if ctx.json:
        artifact = ctx.layout.rel(ctx.layout.promotion_file(record.mission_id))
        print_json({"artifact": artifact, **record.model_dump(mode="json")})
    else:
        print(render(ctx.layout, record))
    return EXIT_OK
