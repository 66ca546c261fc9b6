"""One mission as values: declared criteria, the latest verdict, runtimes and harness progress.

The mission file, ``verification-result.yaml`` and ``runtime-comparison.json`` say what
finished; the log's fold says what is running now. A result file written by an older run
than the one the log shows running never masks the live run (run ids decide). A running
state whose owner is gone reads ``interrupted`` (``uh_core.workspace.liveness``).
"""

from __future__ import annotations

from typing import Any

from uh_core.compat.readers import load_verification, read_markdown_comparison
from uh_core.events.answers import AnswerFold, authors
from uh_core.events.fold import MissionFold
from uh_core.layout import Layout
from uh_core.missions import LoadedMission, load_mission
from uh_core.models.comparison import read_comparison
from uh_core.models.mission import Mission
from uh_core.models.promotion import PromotionRecord
from uh_core.models.verification import VerificationResult
from uh_core.procid import Probe
from uh_core.promote.record import latest_verdict, read_promotion
from uh_core.shown import clip, plural
from uh_core.verify.synthetic import planned
from uh_core.workspace.feed import LogFeed
from uh_core.workspace.files import Failed, FileCache
from uh_core.workspace.liveness import FoldLiveness, Lost, check
from uh_core.workspace.runtime_view import runtime_views
from uh_core.workspace.state import (
    CriterionView,
    HarnessProgressView,
    MissionView,
    PromotionView,
)
from uh_core.workspace.ts_run_view import ts_run_views


def mission_view(
    layout: Layout,
    cache: FileCache,
    mission_id: str,
    feed: LogFeed[MissionFold] | None,
    probe: Probe | None = None,
) -> MissionView:
    """One mission as values: its file, its last verification, its comparison, its live fold
    (each running state checked for a live owner through ``probe``, one per refresh)."""
    fold = feed.fold if feed else MissionFold(mission_id)
    alive = check(probe or Probe(), fold)
    problems: list[str] = []
    if feed and feed.malformed:
        skipped = plural(feed.malformed, "malformed line")
        problems.append(f"{layout.rel(feed.path)}: {skipped} skipped")
    common: dict[str, Any] = {
        "catching_up": feed.catching_up if feed else None,
        "events": feed.count if feed else 0,
        "live": _live(fold, alive),
        "verifying": fold.verify.running and alive.verify is None,
        "interrupted": alive.lines,
    }
    path = layout.mission_file(mission_id)
    loaded = cache.load(path, lambda _: load_mission(layout, mission_id), layout.rel(path))
    if not isinstance(loaded, LoadedMission):
        reason = loaded.message if isinstance(loaded, Failed) else "mission.yaml is gone"
        return MissionView(
            mission_id, status="invalid", error=reason, problems=tuple(problems), **common
        )
    mission = loaded.mission
    vpath = layout.verification_file(mission_id)
    result = cache.load(vpath, lambda p: load_verification(p, layout.rel(p)), layout.rel(vpath))
    if isinstance(result, Failed):
        problems.append(result.message)
        result = None
    cpath = layout.comparison_file(mission_id)
    comparison = cache.load(cpath, lambda p: read_comparison(p, layout.rel(p)), layout.rel(cpath))
    mdpath = cpath.with_suffix(".md")
    if comparison is None and mdpath.is_file():  # the TypeScript uh writes only the report
        comparison = cache.load(
            mdpath, lambda p: read_markdown_comparison(p, mission_id), layout.rel(mdpath)
        )
    if isinstance(comparison, Failed):
        problems.append(comparison.message)
        comparison = None
    record = _record(layout, cache, mission_id, problems)
    verdict, verdict_at = _verdict(fold, result, alive.verify)
    shown, verdict_at = latest_verdict(verdict, verdict_at, record)  # promoted onto main
    verdict = shown or verdict
    comparison_view, runtimes = runtime_views(fold, comparison, alive.runtimes)
    runtimes, ts_runs = ts_run_views(layout, cache, mission_id, runtimes, problems)
    return MissionView(
        mission_id,
        title=mission.display_title,
        status=mission.status,
        verdict=verdict,
        verdict_at=verdict_at,
        criteria=_criteria(mission, fold, result, alive.verify is not None),
        findings=tuple(f"{f.severity}: {f.message}" for f in (result.findings if result else [])),
        comparison=comparison_view,
        runtimes=runtimes,
        harness=_harness_progress(fold, alive.harness),
        problems=tuple(problems),
        depends_on=tuple(mission.depends_on),
        objective=mission.display_objective,
        promotion=_promotion(record),
        ts_runs=ts_runs,
        handover=handover_line(mission_id, fold.answers),
        answers=tuple(
            f"{a.by}: {clip(' '.join(a.text.split()), 200)}" for a in fold.answers.answers
        ),
        **common,
    )


def handover_line(mission_id: str, fold: AnswerFold) -> str | None:
    """The hand-over as every reader says it (``status``, the dashboard, MCP)."""
    if fold.answers:
        who = authors(fold.answers)
        return (
            f"hand-over answered by {who} ({plural(len(fold.answers), 'answer')}): the next "
            f"`uh-core harness run` continues harness/{mission_id} with it"
        )
    if fold.handover is not None:
        code = f" ({fold.handover.code})" if fold.handover.code else ""
        return f'handed over{code}, waiting for a human: `uh-core harness answer {mission_id} "…"`'
    return None


def _live(fold: MissionFold, alive: FoldLiveness) -> str | None:
    """What runs now (states whose owner is gone are not); ``on HOST`` for another host's."""
    hosts = alive.hosts

    def on(what: str, text: str, node: str | None = None) -> str:
        where = node or hosts.get(what)  # a Ray node names itself; else another host's name
        return f"{text} on {where}" if where else text

    parts = []
    verify = fold.verify
    if verify.running and alive.verify is None:
        done = sum(1 for c in verify.criteria.values() if c.status not in ("pending", "running"))
        parts.append(on("verify", f"verify {done}/{verify.total_acceptance}"))
    running = sorted(
        name for name, run in fold.runtimes.items() if run.running and name not in alive.runtimes
    )
    if len(running) == 1:
        only = fold.runtimes[running[0]]
        parts.append(on(f"run {running[0]}", f"run {running[0]}", only.node))
    elif running:
        parts.append(f"run {len(running)} runtimes")
    harness = fold.harness
    if harness is not None and harness.running and alive.harness is None:
        now = f"harness #{harness.attempt or 1} {harness.stage or 'agent'}"
        parts.append(on("harness", now, harness.node))
    return " · ".join(parts) or None


def _verdict(
    fold: MissionFold, result: VerificationResult | None, gone: Lost | None
) -> tuple[str, str | None]:
    state = fold.verify
    if gone is not None:  # its process died mid-run: nothing after it was checked
        return "interrupted", gone.seen or state.last_timestamp
    finished = state.verify_status not in (None, "running")
    if finished and (result is None or result.run_id != state.verify_run_id):
        return str(state.verify_status), state.last_timestamp
    if result is not None:
        return result.status, result.finished_at
    return "-", None


def _criteria(
    mission: Mission, fold: MissionFold, result: VerificationResult | None, gone: bool
) -> tuple[CriterionView, ...]:
    """What verify checks, in its order: the declared criteria, then the harness-made ones
    (the TDD gate), each with its latest result. A verify whose process is gone leaves
    what it had not checked ``unobserved``, as an interrupted verify records it."""
    state = fold.verify
    fold_run = state.verify_run_id
    use_result = result is not None and (fold_run is None or result.run_id == fold_run)
    status = "unobserved" if gone else "pending" if fold_run or use_result else "-"
    rows: dict[str, CriterionView] = {
        ac.id: CriterionView(
            ac.id,
            severity=ac.severity,
            description=ac.description,
            command=ac.check_command,
            status=status,
            degraded=ac.degraded.gap() if ac.degraded else None,
        )
        for ac in mission.criteria()
    }
    for ac_id, description in planned(mission):
        rows[ac_id] = CriterionView(ac_id, description=description, synthetic=True, status=status)
    if use_result and result is not None:
        for ac in result.acceptance_criteria:
            rows[ac.id] = CriterionView(
                ac.id,
                severity=ac.severity,
                status=ac.status,
                exit_code=ac.exit_code,
                duration_ms=ac.duration_ms,
                timed_out=ac.timed_out,
                synthetic=ac.synthetic,
                flaky=ac.flaky,
                description=ac.description,
                command=ac.check_command,
                degraded=ac.degraded.gap() if ac.degraded else None,
                stdout=ac.stdout_snippet,
                stderr=ac.stderr_snippet,
                stdout_log=ac.stdout_log,
                stderr_log=ac.stderr_log,
            )
    elif fold_run is not None:
        for ac_id, crit in state.criteria.items():
            base = rows.get(ac_id) or CriterionView(ac_id)
            rows[ac_id] = CriterionView(
                ac_id,
                severity=crit.severity,
                status="unobserved" if gone and crit.status == "running" else crit.status,
                exit_code=crit.exit_code,
                duration_ms=crit.duration_ms if crit.status != "running" else None,
                timed_out=crit.timed_out,
                synthetic=crit.synthetic,
                flaky=crit.flaky,
                description=base.description,
                command=base.command,
                degraded=base.degraded,
            )
    return tuple(rows.values())


def _harness_progress(fold: MissionFold, gone: Lost | None) -> HarnessProgressView | None:
    h = fold.harness
    if h is None:
        return None
    return HarnessProgressView(
        h.run_id,
        "interrupted" if gone is not None else h.status,
        branch=h.branch,
        attempt=h.attempt,
        stage=h.stage,
        failing_stage=h.failing_stage,
        attempts=h.attempts,
        reason=gone.why("harness run") if gone is not None else h.reason,
        last_seen=gone.seen if gone is not None else None,
    )


def _record(
    layout: Layout, cache: FileCache, mission_id: str, problems: list[str]
) -> PromotionRecord | None:
    path = layout.promotion_file(mission_id)
    record = cache.load(path, lambda _: read_promotion(layout, mission_id), layout.rel(path))
    if isinstance(record, Failed):
        problems.append(record.message)
        return None
    return record


def _promotion(record: PromotionRecord | None) -> PromotionView | None:
    if record is None:
        return None
    source = (
        f"branch {record.branch}" if record.source == "branch" else f"sandbox {record.sandbox_id}"
    )
    return PromotionView(
        record.decision,
        record.approved_by,
        record.promoted_at,
        source,
        verification_status=record.verification_status,
        forced=record.forced,
        auto=record.auto,
        commit=record.commit,
        decisions=len(record.history) + 1,
    )
