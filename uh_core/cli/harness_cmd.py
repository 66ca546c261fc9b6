"""``uh-core harness run | plan | report | prompt | cancel | answer``: the delivery loop (contract
§7)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from uh_core.cli.common import (
    EXIT_OK,
    add_isolation_flag,
    add_root,
    context,
    positive_float,
    print_json,
    require_harness,
)


def _add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default text)"
    )
    parser.add_argument("--json", action="store_true", help="same as --format json")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    group = sub.add_parser("harness", help="the delivery loop: sandbox, agent, gate, branch")
    actions = group.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True

    run = actions.add_parser(
        "run", help="run every pending mission through agent and gate onto harness/<id>"
    )
    run.add_argument(
        "--req", action="append", default=[], metavar="ID", help="only this mission (repeatable)"
    )
    run.add_argument(
        "--agent",
        metavar="CMD",
        help="agent command; {prompt_file} is replaced by the prompt's path",
    )
    run.add_argument("--runtime", metavar="NAME", help="adapter id to run instead of --agent")
    add_isolation_flag(run)
    run.add_argument("--test-cmd", metavar="CMD", help="test command; {mission} is the id")
    run.add_argument("--max-attempts", type=int, metavar="N", help="attempts per mission")
    run.add_argument(
        "--timeout", type=positive_float, metavar="S", help="stop each agent run after S s"
    )
    run.add_argument(
        "--force", action="store_true", help="delete and recreate an existing harness/<id> branch"
    )
    run.add_argument(
        "--strict-tests",
        action="store_true",
        help="fail when the agent changed a required test function",
    )
    run.add_argument(
        "--strict-artifacts",
        action="store_true",
        help="fail when a declared expected file was not touched",
    )
    run.add_argument(
        "--profile",
        metavar="NAME",
        help="run every mission under this profile (else each mission's first matching one)",
    )
    run.add_argument(
        "--resume",
        action="store_true",
        help="continue on an existing harness/<id> branch and its sandbox (not with --force)",
    )
    run.add_argument(
        "--stop-survivors",
        action="store_true",
        help="with --resume: first stop an earlier run's runner and the processes still "
        "working in its sandbox (SIGTERM, then SIGKILL); without it they refuse the run",
    )
    run.add_argument(
        "--skip-not-ready",
        action="store_true",
        help="pass over missions `harness plan` reports blocked (else they run with a warning)",
    )
    run.add_argument(
        "--budget-seconds",
        type=positive_float,
        metavar="S",
        help="start no mission after S seconds of the run (checked before each mission)",
    )
    run.add_argument("--max-requirements", type=int, metavar="N", help="start at most N missions")
    run.add_argument(
        "--budget-usd",
        type=positive_float,
        metavar="USD",
        help="start no attempt whose expected cost would take the run past USD "
        "(needs pricing: in harness.config.yaml; docs/costs.md)",
    )
    run.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="run up to N missions at once, each after the missions it depends_on (default 1)",
    )
    run.add_argument(
        "--executor",
        choices=("local", "ray"),
        help="where missions run: this machine (default) or a Ray cluster",
    )
    run.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="the Ray cluster for --executor ray (else RAY_ADDRESS)",
    )
    run.add_argument(
        "--promote-green",
        action="store_true",
        help="promote each mission right after its gate passes, through `uh-core promote` "
        "(clean tree, re-judged, conflict-safe; never an unconfined or needs-review green); "
        "needs --approved-by",
    )
    run.add_argument(
        "--approved-by",
        metavar="NAME",
        help="with --promote-green: who approves every green of this run (recorded)",
    )
    run.add_argument(
        "--trust-workers",
        action="store_true",
        help="--executor ray: a worker's green stands without the head judging the commit "
        "again itself (recorded in the ledger; docs/scale.md)",
    )
    _add_format(run)
    add_root(run)
    run.set_defaults(handler=handle_run)

    plan = actions.add_parser(
        "plan", help="each pending mission: ready, or what blocks it; touches nothing"
    )
    plan.add_argument("--test-cmd", metavar="CMD", help="as for `harness run`")
    plan.add_argument("--agent", metavar="CMD", help="as for `harness run`")
    plan.add_argument("--runtime", metavar="NAME", help="as for `harness run`")
    plan.add_argument("--profile", metavar="NAME", help="as for `harness run`")
    add_isolation_flag(plan)
    plan.add_argument(
        "--force", action="store_true", help="an existing harness/<id> branch is no blocker"
    )
    _add_format(plan)
    add_root(plan)
    plan.set_defaults(handler=handle_plan)

    report = actions.add_parser(
        "report",
        help="over every ledger: where attempts end, pass rate, declared and measured cost",
    )
    report.add_argument(
        "--mark-false-failure",
        metavar="ID",
        help="mark the failures of mission ID as not the agent's (needs --reason)",
    )
    report.add_argument("--reason", metavar="TEXT", help="why the failure was false")
    _add_format(report)
    add_root(report)
    report.set_defaults(handler=handle_report)

    prompt = actions.add_parser("prompt", help="print the exact prompt; touches nothing")
    prompt.add_argument("mission_id", metavar="ID")
    prompt.add_argument("--test-cmd", metavar="CMD", help="as for `harness run`")
    prompt.add_argument("--profile", metavar="NAME", help="as for `harness run`")
    _add_format(prompt)
    add_root(prompt)
    prompt.set_defaults(handler=handle_prompt)

    from uh_core.cli.harness_answer_cmd import register_answer
    from uh_core.cli.harness_cancel_cmd import register_cancel

    register_cancel(actions)
    register_answer(actions)


def _wants_json(args: argparse.Namespace) -> bool:
    return bool(args.json or args.format == "json")


def handle_run(args: argparse.Namespace) -> int:
    from uh_core.cli.harness_cancel_cmd import run_cancellable
    from uh_core.errors import UsageError
    from uh_core.harness.config import Flags
    from uh_core.harness.loop import HarnessRun, mission_runner
    from uh_core.harness.prepare import prepare
    from uh_core.harness.summary import as_json, exit_code, render
    from uh_core.runtime.run import CancelToken

    ctx = context(args)
    require_harness(ctx)
    flags = Flags(
        agent=args.agent,
        runtime=args.runtime,
        test_cmd=args.test_cmd,
        max_attempts=args.max_attempts,
        timeout_s=args.timeout,
        force=args.force,
        strict_tests=args.strict_tests,
        strict_artifacts=args.strict_artifacts,
        requested=tuple(args.req),
        skip_not_ready=args.skip_not_ready,
        resume=args.resume,
        profile=args.profile,
        budget_seconds=args.budget_seconds,
        budget_usd=args.budget_usd,
        max_requirements=args.max_requirements,
        isolation=args.isolation,
        jobs=args.jobs,
        executor=args.executor,
        ray_address=args.ray_address,
    )
    prepared = prepare(ctx.layout, flags, stop_survivors=args.stop_survivors)

    def progress(line: str) -> None:
        sys.stderr.write(f"uh-core: harness: {line}\n")
        sys.stderr.flush()

    if args.trust_workers and prepared.settings.executor != "ray":
        raise UsageError("--trust-workers is for --executor ray (workers' greens)")
    _check_promote_green(args, prepared.settings.jobs, prepared.settings.executor)
    # --executor ray: connected before anything is written
    remote = mission_runner(prepared, trust_workers=args.trust_workers)
    runner = HarnessRun(prepared, CancelToken(), progress=progress, run_mission=remote)
    runner.ledger.settings.trust_workers = args.trust_workers
    if args.promote_green:
        runner.after_record = _promote_green(ctx.layout, args.approved_by, progress)
    try:
        # registered; Ctrl-C, SIGTERM, SIGHUP and `harness cancel` stop it
        ledger = run_cancellable(runner)
    finally:
        if remote is not None:
            remote.close()
    assert runner.ledger_file is not None
    shown = ctx.layout.rel(runner.ledger_file)
    if _wants_json(args):
        print_json(as_json(ledger, shown))
    else:
        print(render(ledger, shown))
    return exit_code(ledger)


def _check_promote_green(args: argparse.Namespace, jobs: int, executor: str) -> None:
    """``--promote-green``'s conditions, before anything is written."""
    from uh_core.errors import UsageError

    if not args.promote_green:
        if args.approved_by is not None:
            raise UsageError(
                "--approved-by without --promote-green", fix="add --promote-green, or drop it"
            )
        return
    name = args.approved_by or ""
    if not name.strip() or any(ord(c) < 32 or ord(c) == 127 for c in name) or len(name) > 200:
        raise UsageError(
            "--promote-green needs --approved-by NAME: who approves every green of this run",
            fix="--promote-green --approved-by 'Ada Lovelace'",
        )
    if jobs > 1 or executor != "local":
        raise UsageError(
            "--promote-green runs one mission at a time on this machine: a promotion moves "
            "the operator's branch while no agent works beside it",
            fix="drop --jobs / --executor ray, or promote after the run (`uh-core promote`)",
        )


def _promote_green(layout: Any, approved_by: str, progress: Any) -> Any:
    """The run's ``after_record``: a green promoted as ``approved_by``, its outcome recorded."""
    from uh_core.models.ledger import GreenPromotion, RequirementRecord
    from uh_core.promote.auto import after_harness_green

    def promote_green(record: RequirementRecord) -> bool:
        if record.outcome != "pass" or not record.commit:
            return False
        outcome = after_harness_green(layout, record.mission_id, record.branch, approved_by)
        made = outcome.record
        if made is not None:
            record.promotion = GreenPromotion(
                approved_by=approved_by, commit=made.commit, onto=made.onto_branch
            )
            progress(f"{record.mission_id}: promoted onto {made.onto_branch} as {made.commit}")
        else:
            record.promotion = GreenPromotion(approved_by=approved_by, refused=outcome.failure)
            progress(f"{record.mission_id}: not promoted: {outcome.failure}")
        return True

    return promote_green


def handle_plan(args: argparse.Namespace) -> int:
    from uh_core.harness import preflight
    from uh_core.harness.config import Flags, load_config, resolve
    from uh_core.harness.plan import build_plan, render_plan
    from uh_core.harness.profiles import by_name, load_profiles
    from uh_core.harness.select import select

    ctx = context(args)
    require_harness(ctx)
    config = load_config(ctx.layout)
    flags = Flags(
        agent=args.agent,
        runtime=args.runtime,
        test_cmd=args.test_cmd,
        profile=args.profile,
        isolation=args.isolation,
        force=args.force,
    )
    settings = resolve(ctx.layout, config, flags)
    profiles = load_profiles(ctx.layout, config)
    named = by_name(profiles, settings.profile) if settings.profile is not None else None
    # what would refuse `harness run` itself, in the run's own words
    refusals = preflight.blockers(ctx.layout, settings, named, profiles)
    selection = select(ctx.layout)
    items = build_plan(ctx.layout, selection.loaded, settings.test_cmd, ignore_branches=args.force)
    if _wants_json(args):
        print_json(
            {
                "run_blockers": [b.as_dict() for b in refusals],
                "can_run": not refusals,
                "missions": [item.as_dict() for item in items],
                "ready": sum(1 for item in items if item.ready),
                "blocked": sum(1 for item in items if not item.ready),
            }
        )
    else:
        print(render_plan(items, len(selection.loaded), refusals))
    return EXIT_OK


def handle_report(args: argparse.Namespace) -> int:
    from uh_core.errors import UsageError
    from uh_core.harness.marks import mark_false_failure
    from uh_core.harness.report import build_report, render_report

    ctx = context(args)
    require_harness(ctx)
    if args.mark_false_failure is not None:
        mark = mark_false_failure(ctx.layout, args.mark_false_failure, args.reason)
        if _wants_json(args):
            print_json(mark)
        else:
            print(f"marked the failures of {mark['mission_id']} as false: {mark['reason']}")
        return EXIT_OK
    if args.reason is not None:
        raise UsageError("--reason without --mark-false-failure", fix="add --mark-false-failure ID")
    from uh_core.harness.ledger import list_ledgers
    from uh_core.harness.marks import marks_path
    from uh_core.workspace.index import cached_document

    # a function of the ledgers and the marks alone: from the derived index when none changed
    inputs = [*list_ledgers(ctx.layout), marks_path(ctx.layout)]
    data = cached_document(ctx.layout, "report", inputs, lambda: build_report(ctx.layout))
    if _wants_json(args):
        print_json(data)
    else:
        print(render_report(data))
    return EXIT_OK


def handle_prompt(args: argparse.Namespace) -> int:
    from uh_core.harness.config import Flags, load_config, resolve
    from uh_core.harness.profiles import apply, choose, load_profiles
    from uh_core.harness.prompt import build_prompt
    from uh_core.missions import load_mission

    ctx = context(args)
    require_harness(ctx)
    config = load_config(ctx.layout)
    settings = resolve(ctx.layout, config, Flags(test_cmd=args.test_cmd))
    mission = load_mission(ctx.layout, args.mission_id).mission
    profile = choose(load_profiles(ctx.layout, config), mission, args.profile)
    text = build_prompt(mission, apply(settings, profile))
    if _wants_json(args):
        data: dict[str, Any] = {
            "mission_id": mission.id,
            "attempt": 1,
            "profile": profile.name if profile is not None else None,
            "prompt": text,
        }
        print_json(data)
    else:
        sys.stdout.write(text)
    return EXIT_OK
