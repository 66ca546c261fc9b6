"""``mission run-all``: every runtime on the same base commit, one sandbox each.

Sandboxes are created one after another (git worktree creation contends on the
repository), then the runs are dispatched through the executor, in parallel unless
``serial``. A runtime whose preflight, sandbox or launch fails is an ``error`` or
``blocked`` outcome, never a crash of the whole run. Ctrl-C cancels every run, writes
what is known, and the caller exits 130.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import partial

from uh_core.clock import timestamp
from uh_core.errors import UsageError
from uh_core.events.writer import EventLog
from uh_core.executor import Executor, Job, LocalExecutor
from uh_core.fileio import write_json, write_text_atomic
from uh_core.git import resolve_commit
from uh_core.isolation import become_subreaper, children_of, reap_survivors
from uh_core.layout import Layout
from uh_core.models.adapter import AdapterManifest
from uh_core.models.comparison import Comparison, RuntimeRow
from uh_core.models.events import RuntimeCompared, RuntimeComparisonSummary
from uh_core.models.mission import Mission
from uh_core.models.sandbox import SandboxEntry
from uh_core.models.usage import TokenUsage
from uh_core.runall.compare import compare
from uh_core.runall.consensus import build as build_consensus
from uh_core.runall.report import render_markdown
from uh_core.runtime.run import CancelToken, MissionRun, RunOptions, RunOutcome, check_capabilities


@dataclass
class RunAllOptions:
    serial: bool = False
    force: bool = False
    timeout_s: float | None = None
    isolation: str | None = None  # auto (None) | bwrap | none
    executor: str = "local"  # local | ray (uh_core.distributed)
    ray_address: str | None = None
    # a repeat's label → the runtime it is (runall/repeat.py): where Ray places it
    placed_as: dict[str, str] = field(default_factory=dict)
    agree_min: int | None = None  # the consensus: hunks made by this many (default: majority)


def _row(outcome: RunOutcome) -> RuntimeRow:
    usage = [TokenUsage.model_validate(entry) for entry in outcome.usage]
    return RuntimeRow(
        usage=usage,
        input_tokens=sum(u.input_tokens for u in usage),
        output_tokens=sum(u.output_tokens for u in usage),
        runtime=outcome.runtime,
        status="failed" if outcome.status == "cancelled" else outcome.status,
        exit_code=outcome.exit_code,
        duration_ms=outcome.duration_ms,
        diff_hash=outcome.diff_hash,
        sandbox=outcome.sandbox.id if outcome.sandbox else None,
        touched_paths=outcome.touched_paths,
        final_message=outcome.final_message,
        error=outcome.error,
        isolation=outcome.isolation,
        isolation_note=outcome.isolation_note,
        tampered=outcome.tampered,
    )


def run_all(
    layout: Layout,
    mission: Mission,
    manifests: list[AdapterManifest],
    options: RunAllOptions,
    token: CancelToken,
    executor: Executor | None = None,
) -> Comparison:
    if not manifests:
        raise UsageError(
            "no runtimes to run: no manifest has status: active",
            fix="pass --runtimes a,b or set status: active in .harness/adapters/<id>.yaml",
        )
    for manifest in manifests:  # refuse before anything is created
        check_capabilities(mission, manifest, options.force)
    base = resolve_commit(layout.root, "HEAD")
    own: set[str] = set()  # every sandbox of this run: no guard flags another's records
    run_options = RunOptions(
        force=options.force, timeout_s=options.timeout_s, base=base,
        isolation=options.isolation, own=own, reap_each=False,
    )  # fmt: skip
    runs = [MissionRun(layout, mission, m, run_options, token) for m in manifests]
    for run in runs:
        run.placed_as = options.placed_as.get(run.manifest.id, run.manifest.id)
    outcomes: dict[str, RunOutcome] = {}
    jobs: list[Job[RunOutcome]] = []
    remote = None
    if options.executor == "ray":  # connected before anything is made: refused, no trace
        from uh_core.distributed.runner import RayExecutor

        remote = RayExecutor(options.ray_address)
    shipped: list[tuple[MissionRun, SandboxEntry]] = []
    for run in runs:
        adapter = run.preflight(here=remote is None)
        if isinstance(adapter, RunOutcome):
            outcomes[run.manifest.id] = adapter
            continue
        sandbox = run.make_sandbox(base)
        if isinstance(sandbox, RunOutcome):
            outcomes[run.manifest.id] = sandbox
            continue
        own.add(sandbox.id)
        if remote is not None:
            shipped.append((run, sandbox))
            continue
        jobs.append(Job(run.manifest.id, partial(run.execute, adapter, sandbox)))
    if remote is not None:
        from uh_core.distributed.runall import run_on_ray

        landed = run_on_ray(layout, remote, shipped, base, token, options.serial)
        for (run, _sandbox), outcome in zip(shipped, landed, strict=True):
            outcomes[run.manifest.id] = outcome
        return _compared(layout, mission, manifests, outcomes, base, token, options)
    become_subreaper()  # what the agents leave behind becomes ours to stop
    children = set(children_of(os.getpid()))
    try:
        results = (executor or LocalExecutor()).run_all(jobs, parallel=not options.serial)
    finally:  # once every runtime has ended: nothing any of them started stays alive
        left = [f"pid {s.pid}: {s.cmdline}" for s in reap_survivors(exclude=children)]
    for job, outcome in zip(jobs, results, strict=True):
        outcome.survivors = left
        outcomes[job.name] = outcome
    return _compared(layout, mission, manifests, outcomes, base, token, options)


def _compared(
    layout: Layout,
    mission: Mission,
    manifests: list[AdapterManifest],
    outcomes: dict[str, RunOutcome],
    base: str,
    token: CancelToken,
    options: RunAllOptions,
) -> Comparison:
    rows = [_row(outcomes[m.id]) for m in manifests]
    comparison = compare(mission.id, rows)
    comparison.base_commit = base
    comparison.created_at = timestamp()
    comparison.interrupted = token.reason is not None
    if not comparison.interrupted:
        comparison.consensus = build_consensus(layout, mission, comparison, options.agree_min)
    write_comparison(layout, comparison)
    return comparison


def write_comparison(layout: Layout, comparison: Comparison) -> None:
    folder = layout.mission_dir(comparison.mission_id)
    write_json(layout.comparison_file(comparison.mission_id), comparison.model_dump(mode="json"))
    write_text_atomic(folder / "runtime-comparison.md", render_markdown(comparison))
    log = EventLog(layout.mission_events(comparison.mission_id), mission_id=comparison.mission_id)
    for row in comparison.runtimes:
        log.emit(
            RuntimeCompared(
                runtime=row.runtime,
                status=row.status,
                exit_code=row.exit_code,
                duration_ms=row.duration_ms,
                diff_hash=row.diff_hash,
                diff_files=len(row.touched_paths),
                sandbox_id=row.sandbox,
            )
        )
    log.emit(
        RuntimeComparisonSummary(
            status=comparison.status,
            agreement=comparison.status == "agreement",
            agreement_runtimes=comparison.agreement_runtimes,
            divergent_runtimes=comparison.divergent_runtimes,
            failed_runtimes=comparison.failed_runtimes,
        )
    )
