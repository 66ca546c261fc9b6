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
import threading
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
_RUNNING = float("inf")  # a claim's end while its job runs: the job's end
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
    (the head then cancels through Ray after its grace: the job goes on meanwhile). A
    control actor that died means its head is gone (it dies with the command that made
    it): the job stops, as it would with the head's own worker processes — a warm worker
    outlives its head and must not run an agent for nobody."""
    try:
        reason: str | None = ray.get(control.reason.remote(job_id), timeout=_CONTROL_S * 10)
    except ray.exceptions.RayActorError:
        return "the head is gone (its control actor died)"
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
    """The Ray task: one job in a worker process of its own (no warm pool serves it)."""
    yield from _stream(job_json, source, control, None, None)


def _stream(
    job_json: str, source: JobSource, control: Any, pool: str | None,
    cancelled: Callable[[], bool] | None,
) -> Iterator[str]:  # fmt: skip
    import ray

    _forget_token()
    job = parse_job(job_json)
    node = this_node()
    if pool is not None:
        node.pid, node.pool = os.getpid(), pool
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
                if cancelled is not None and cancelled():  # ray.cancel of an actor's task
                    token.cancel("cancelled by the head (ray.cancel)")
                if control is not None and time.monotonic() - checked >= _CONTROL_S:
                    checked = time.monotonic()
                    reason = _asked(ray, control, job.job_id)
                    if reason:
                        token.cancel(reason)
            except KeyboardInterrupt:  # ray.cancel: stop the agent, still report
                token.cancel("cancelled by the head (ray.cancel)")
    finally:
        discard(layout)


class JobWorker:
    """A warm worker: one long-lived Ray actor per job slot, serving job after job, so a
    job does not pay a worker process's start (and the job code's imports). ``pool`` says
    whose it is: ``"run"`` (made by one command, gone with it) or ``"service"`` (a named,
    detached actor that ``uh-core worker`` made for its node; every later run reuses it).

    One job at a time: a head ``claim``s the worker for a job before it sends the job, and
    the claim ends with the job (``run``'s end) or, if the job never comes (its head died
    between the two), after ``CLAIM_S``. Claims keep two heads from sharing a slot; the
    actor is threaded only so that ``claim`` and ``about`` answer while a job runs."""

    CLAIM_S = 30.0

    def __init__(self, pool: str) -> None:
        warm()
        self.pool = pool
        self._lock = threading.Lock()
        self._busy: tuple[str, float] | None = None  # (job id, claimed until)
        self.served = 0

    def about(self) -> dict[str, Any]:
        import ray

        return {
            "pid": os.getpid(), "pool": self.pool, "served": self.served,
            "node_id": ray.get_runtime_context().get_node_id(),
            "busy": self._busy[0] if self._busy else None,
        }  # fmt: skip

    def claim(self, job_id: str) -> bool:
        with self._lock:
            now = time.monotonic()
            if self._busy is not None and self._busy[1] > now:
                return False
            self._busy = (job_id, now + self.CLAIM_S)
            return True

    def release(self, job_id: str) -> None:
        """A claim the head gives back unused (it stopped before sending the job)."""
        with self._lock:
            if self._busy is not None and self._busy[0] == job_id and self._busy[1] != _RUNNING:
                self._busy = None

    def run(self, job_json: str, source: JobSource, control: Any) -> Iterator[str]:
        import ray

        job_id = parse_job(job_json).job_id
        with self._lock:
            busy = self._busy
            if busy is not None and busy[0] != job_id and busy[1] > time.monotonic():
                raise RuntimeError(f"this worker is serving job {busy[0]}")
            self._busy = (job_id, _RUNNING)
        context = ray.get_runtime_context()
        try:
            self.served += 1
            yield from _stream(job_json, source, control, self.pool, context.is_canceled)
        finally:
            with self._lock:
                self._busy = None
