"""``mission run-all --executor ray``: each runtime a job on a node that advertises it.

The head has made every runtime's sandbox (empty, at the base commit) as the local run
does; each job runs that runtime on a worker and lands in that sandbox (``land_runtime``),
so the comparison, ``verify --sandbox`` and ``promote`` read what they read after a local
run. Event lines arrive in the mission's log as they are written, tagged with their node.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from uh_core.distributed.runner import RayExecutor
from uh_core.errors import UhError
from uh_core.events.writer import EventLog
from uh_core.jobs.model import NodeInfo
from uh_core.jobs.runtime_job import failed_outcome, land_runtime, runtime_job
from uh_core.jobs.source import make_source
from uh_core.layout import Layout
from uh_core.models.sandbox import SandboxEntry
from uh_core.runtime.run import CancelToken, MissionRun, RunOutcome


def _blocked(run: MissionRun, sandbox: SandboxEntry, why: str) -> RunOutcome:
    outcome = RunOutcome(run.mission.id, run.manifest.id, "blocked", sandbox=sandbox, error=why)
    return run._finish_event(outcome)


def run_on_ray(
    layout: Layout,
    executor: RayExecutor,
    pending: list[tuple[MissionRun, SandboxEntry]],
    base: str,
    token: CancelToken,
    serial: bool = False,
) -> list[RunOutcome]:
    """Outcomes in the order of ``pending``; ``executor`` is closed at the end."""
    try:
        if not pending:
            return []
        executor.share(make_source(layout, base))
        mission = pending[0][0].mission
        text = layout.mission_file(mission.id).read_text(encoding="utf-8")
        log = EventLog(layout.mission_events(mission.id), mission_id=mission.id)
        lock = threading.Lock()

        def sink(lines: list[bytes], _node: NodeInfo) -> None:
            with lock:
                for line in lines:
                    log.append_line(line)

        def one(item: tuple[MissionRun, SandboxEntry]) -> RunOutcome:
            run, sandbox = item
            resources, why = executor.placement(run.placed_as)
            if why is not None:
                return _blocked(run, sandbox, why)
            job = runtime_job(f"{sandbox.id}", run, sandbox, text)
            stream = executor.submit(job, resources)
            seen = executor.follow(stream, job.job_id, token, sink, lambda _line: None)
            node = seen.node or NodeInfo(node_id="?")
            if seen.result is None:  # never ran, or died: the head says it ended
                why = seen.failure or "the job ended without a result"
                return run._finish_event(failed_outcome(mission.id, run.manifest.id, sandbox, why))
            try:
                return land_runtime(layout, sandbox, job, seen.result, node)
            except UhError as exc:
                why = exc.one_line()
                return run._finish_event(failed_outcome(mission.id, run.manifest.id, sandbox, why))

        workers = 1 if serial else len(pending)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="uh-ray") as pool:
            return list(pool.map(one, pending))
    finally:
        log_close = locals().get("log")
        if isinstance(log_close, EventLog):
            log_close.close()
        executor.close()
