"""The runs the TypeScript uh recorded for a mission, as values for every reader.

Its ``mission run`` writes ``runs/index.json`` (one row a run), ``latest.json`` (the newest)
and ``runtime-result.yaml`` (the latest run's result, where its ``mission verdict`` writes the
operator's verdict). Read through ``uh_core.compat.readers.read_ts_runs``, cached on all three
files: a verdict recorded later changes only ``runtime-result.yaml``, and is shown at once.

Two views come out: every run (``MissionView.ts_runs``, newest first: ``status --json``, the
mission screen) and a runtime row for each runtime nothing of uh's shows.
"""

from __future__ import annotations

from uh_core.compat.readers import TsRun, TsRuns, read_ts_runs
from uh_core.layout import Layout
from uh_core.workspace.files import Failed, FileCache
from uh_core.workspace.state import RuntimeView, TsRunView

_RUNTIME_STATUS = {"passed": "succeeded", "timeout": "failed"}


def _view(run: TsRun, latest: str | None) -> TsRunView:
    result = run.result
    return TsRunView(
        run.run_id,
        run.status,
        runtime=run.runtime or (result.runtime if result else None),
        started_at=run.started_at,
        finished_at=str(run.finished_at) if run.finished_at else None,
        exit_code=result.exit_code if result else None,
        verdict=run.verdict,
        latest=run.run_id == latest,
    )


def ts_run_views(
    layout: Layout,
    cache: FileCache,
    mission_id: str,
    runtimes: tuple[RuntimeView, ...],
    problems: list[str],
) -> tuple[tuple[RuntimeView, ...], tuple[TsRunView, ...]]:
    """``runtimes`` with a row for each runtime only the TypeScript uh ran (its newest run),
    and every run it recorded, newest first."""
    mdir = layout.mission_dir(mission_id)
    index = mdir / "runs" / "index.json"
    if not index.is_file():
        return runtimes, ()
    runs = cache.load(
        index,
        lambda _: read_ts_runs(layout, mission_id),
        layout.rel(index),
        also=(mdir / "latest.json", mdir / "runtime-result.yaml"),
    )
    if not isinstance(runs, TsRuns):
        if isinstance(runs, Failed):
            problems.append(runs.message)
        return runtimes, ()
    problems.extend(runs.problems)
    views = tuple(
        _view(run, runs.latest)
        for run in sorted(runs.runs, key=lambda r: r.started_at, reverse=True)
    )
    shown = {r.runtime for r in runtimes}
    added: dict[str, RuntimeView] = {}
    for view in views:
        if not view.runtime or view.runtime in shown or view.runtime in added:
            continue
        added[view.runtime] = RuntimeView(
            view.runtime,
            _RUNTIME_STATUS.get(view.status, view.status),
            exit_code=view.exit_code,
            sandbox=view.run_id,
            error=f"verdict: {view.verdict}" if view.verdict and view.verdict != "pass" else None,
        )
    return runtimes + tuple(sorted(added.values(), key=lambda r: r.runtime)), views
