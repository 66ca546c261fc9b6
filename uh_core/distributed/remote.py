"""What runs on a Ray worker: one job, streamed.

``job_stream`` is the Ray task (a streaming generator): it names its node first, makes the
job's workspace, runs the job through the same code as the local executor, and yields the
job's new event lines and progress lines as they come, then the result. A cancel from the
head arrives through ``JobControl`` (polled) or as Ray's own interrupt; either way the
job's token is set and the agent is stopped as a group — the result still comes back.
The cluster's token variables are dropped from the worker process's environment first, so
nothing the job starts inherits them.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

from uh_core.jobs.model import (
    HarnessJob,
    JobResult,
    JobSource,
    NodeInfo,
    RuntimeJob,
    StreamItem,
    parse_job,
)
from uh_core.jobs.source import discard, materialise, worker_home
from uh_core.jobs.stream import JobStream
from uh_core.layout import Layout
from uh_core.runtime.run import CancelToken

_POLL_S = 0.1
_CONTROL_S = 0.5


class JobControl:
    """Cancel flags, shared by the head and its workers (a Ray actor, no CPU)."""

    def __init__(self) -> None:
        self.reasons: dict[str, str] = {}
        self.everything: str | None = None

    def cancel(self, job_id: str | None, reason: str) -> None:
        if job_id is None:
            self.everything = self.everything or reason
        else:
            self.reasons.setdefault(job_id, reason)

    def reason(self, job_id: str) -> str | None:
        return self.reasons.get(job_id) or self.everything


def warm() -> str:
    """A worker process made ready for jobs: Ray starts one process per slot for each
    driver, and importing the job code is most of its start. Run while the head prepares."""
    import uh_core.jobs.harness_job
    import uh_core.jobs.runtime_job  # noqa: F401

    return "warm"


def this_node() -> NodeInfo:
    import ray

    return NodeInfo(
        node_id=ray.get_runtime_context().get_node_id(),
        host=socket.gethostname(),
        ip=ray.util.get_node_ip_address(),  # type: ignore[no-untyped-call]
    )


def _asked(ray: Any, control: Any, job_id: str) -> str | None:
    """The head's cancel flag for ``job_id``; None when the control actor cannot answer
    (the head then cancels through Ray after its grace: the job goes on meanwhile)."""
    try:
        reason: str | None = ray.get(control.reason.remote(job_id), timeout=_CONTROL_S * 10)
    except Exception:
        return None
    return reason


def _work(
    job: RuntimeJob | HarnessJob, source: JobSource, token: CancelToken
) -> Callable[[Callable[[str], None]], JobResult]:
    def work(progress: Callable[[str], None]) -> JobResult:
        started = time.monotonic()
        layout = materialise(source, job.job_id)
        made = time.monotonic()
        if isinstance(job, RuntimeJob):
            from uh_core.jobs.runtime_job import run_runtime_job

            result = run_runtime_job(layout, job, source.commit, token)
        else:
            from uh_core.jobs.harness_job import run_harness_job

            result = run_harness_job(layout, job, token, progress)
        result.timings = {"materialise_s": round(made - started, 3), **result.timings}
        return result

    return work


def _forget_token() -> None:
    """The cluster's token out of this worker process's environment before any agent or
    check starts from it (Ray has read it: connected, it keeps it in memory)."""
    from uh_core.distributed.auth import AUTH_VARIABLES

    for name in AUTH_VARIABLES:
        os.environ.pop(name, None)


def job_stream(job_json: str, source: JobSource, control: Any) -> Iterator[str]:
    import ray

    _forget_token()
    job = parse_job(job_json)
    node = this_node()
    yield StreamItem(kind="node", node=node).model_dump_json()
    token = CancelToken()
    layout = Layout(worker_home() / "jobs" / job.job_id / "repo")
    stream = JobStream(_work(job, source, token), [layout.mission_events(job.mission_id)],
                       job.job_id, job.kind)  # fmt: skip
    stream.start()
    checked = time.monotonic()
    try:
        while True:
            try:
                for item in stream.poll(_POLL_S):
                    if item.result is not None:
                        item.result.node = node
                    yield item.model_dump_json()
                    if item.kind == "result":
                        return
                if control is not None and time.monotonic() - checked >= _CONTROL_S:
                    checked = time.monotonic()
                    reason = _asked(ray, control, job.job_id)
                    if reason:
                        token.cancel(reason)
            except KeyboardInterrupt:  # ray.cancel: stop the agent, still report
                token.cancel("cancelled by the head (ray.cancel)")
    finally:
        discard(layout)
