"""A mission's runtimes as values: the comparison's rows merged with the live runs in its log.

``runtime-comparison.json`` (written by run-all) holds finished runs, their diff hashes and
equivalence groups; the fold holds runs in progress and runs newer than the comparison.
The harness loop's own agent runs are left to the harness view. A run whose runner is gone
(``lost``, from ``uh_core.workspace.liveness``) is ``interrupted``, with when it was last seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from uh_core.events.fold import MissionFold
from uh_core.models.comparison import Comparison
from uh_core.workspace.liveness import Lost
from uh_core.workspace.state import ComparisonView, GroupView, RuntimeView


def runtime_views(
    fold: MissionFold, comparison: Comparison | None, lost: Mapping[str, Lost] | None = None
) -> tuple[ComparisonView | None, tuple[RuntimeView, ...]]:
    rows: dict[str, RuntimeView] = {}
    view = None
    if comparison is not None:
        agreeing = set(comparison.agreement_runtimes)
        groups = tuple(
            GroupView(g.diff_hash, tuple(g.runtimes), agreeing=bool(set(g.runtimes) & agreeing))
            for g in comparison.groups
        )
        view = ComparisonView(
            comparison.status,
            base_commit=comparison.base_commit,
            created_at=comparison.created_at,
            groups=groups,
            findings=tuple(comparison.findings),
            interrupted=comparison.interrupted,
        )
        line, hunks = _consensus(comparison)
        view = replace(view, consensus=line, consensus_hunks=hunks)
        where = {rt: i for i, g in enumerate(comparison.groups) for rt in g.runtimes}
        for row in comparison.runtimes:
            role = (
                "agreeing"
                if row.runtime in agreeing
                else "divergent"
                if row.runtime in comparison.divergent_runtimes
                else "failed"
                if row.runtime in comparison.failed_runtimes
                else ""
            )
            rows[row.runtime] = RuntimeView(
                row.runtime,
                row.status,
                exit_code=row.exit_code,
                duration_ms=row.duration_ms,
                diff_hash=row.diff_hash,
                sandbox=row.sandbox,
                touched=tuple(row.touched_paths),
                final_message=row.final_message,
                error=row.error,
                group=where.get(row.runtime),
                role=role,
            )
    since = (comparison.created_at or "") if comparison else ""
    harness_run = fold.harness.run_id if fold.harness else None
    for name, run in fold.runtimes.items():
        if harness_run and run.run_id == harness_run:
            continue  # the harness loop's agent: shown in the harness view
        known = rows.get(name)
        if known is not None and not run.running and run.started_at <= since:
            continue  # the comparison already holds this run
        superseded = bool(known and known.sandbox and run.run_id and run.run_id != known.sandbox)
        if superseded and not run.running and (run.finished_at or "") <= since:
            continue  # an older run than the comparison's
        gone = (lost or {}).get(name) if run.running else None
        rows[name] = RuntimeView(
            name,
            "interrupted" if gone is not None else run.status,
            exit_code=run.exit_code,
            duration_ms=run.duration_ms if not run.running else None,
            diff_hash=run.diff_hash,
            sandbox=run.sandbox_id,
            error=gone.why(f"run {name}")
            if gone is not None
            else run.reason
            if run.status not in ("succeeded", "running")
            else None,
            last_message=run.last_message,
            tokens=run.input_tokens + run.output_tokens,
            final_message=run.final_message
            or (known.final_message if known and not run.running else ""),
            files_changed=run.files_changed,
        )
    return view, tuple(rows.values())


def _consensus(comparison: Comparison) -> tuple[str | None, tuple[str, ...]]:
    found = comparison.consensus
    if found is None or found.status == "not_built":
        return None, ()
    hunks = [
        f"{kind} {h.file}:{h.at}: {', '.join(h.runtimes)}"
        for kind, items in (("agreed", found.hunks), ("disputed", found.disputed))
        for h in items
    ]
    return found.line(), tuple(hunks)
