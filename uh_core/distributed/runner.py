"""The head's side of Ray: submit a job, follow its stream, cancel, map faults.

One ``RayExecutor`` per command: connected once, one ``JobControl`` actor, the source
bundle put in the object store once and shared by every job, and a ``WorkerPool`` of warm
slots (``uh_core.distributed.pool``: the service pools ``uh-core worker`` left on its
nodes, else slots of this command's own, started while the head bundles) that serve job
after job. ``submit`` says what to run; ``follow`` picks the slot, sends the job, and is
called from one thread per job; it hands event lines (tagged with the node) and progress
lines to the caller as they arrive, watches the run's cancel token, and returns the job's
result or why there is none — a worker or node that died names the node it ran on. Jobs
are not retried: an agent run costs money and may have effects beyond its sandbox;
``--resume`` reruns.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from uh_core.distributed import cluster
from uh_core.distributed.pool import Member
from uh_core.jobs.model import HarnessJob, JobResult, JobSource, NodeInfo, RuntimeJob, StreamItem
from uh_core.runtime.run import CancelToken

CANCEL_GRACE_S = 60.0  # after the token: how long a worker has to stop its agent and report
_WAIT_S = 0.25
Sink = Callable[[list[bytes], NodeInfo], None]


@dataclass
class Submitted:
    """A job to send: ``follow`` picks its slot when one is free (nothing left yet)."""

    job: RuntimeJob | HarnessJob
    resources: dict[str, float]


@dataclass
class Followed:
    node: NodeInfo | None = None
    result: JobResult | None = None
    failure: str | None = None  # no result: why (the node it ran on named)
    progress: list[str] = field(default_factory=list)
    unstarted: bool = False  # cancelled while it still waited for a node


def tag(lines: list[bytes], node: NodeInfo) -> list[bytes]:
    """Each event line with ``"node"`` set to where it ran (lines that are not JSON pass)."""
    out = []
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(data, dict):
            data["node"] = node.label()
            line = (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        out.append(line)
    return out


class RayExecutor:
    def __init__(self, ray_address: str | None, num_cpus: float = 1.0) -> None:
        # Ray's driver prints the cluster's error messages ("(raylet) The node … has been
        # marked dead") to sys.stdout from a thread of its own: while connected, that is
        # stderr, so --json output stays one document.
        self._stdout = sys.stdout
        sys.stdout = sys.stderr
        try:
            self.ray = cluster.connect(ray_address)
        except BaseException:
            sys.stdout = self._stdout
            raise
        from uh_core.distributed.remote import JobControl, job_stream

        self.control = self.ray.remote(num_cpus=0)(JobControl).remote()
        self._task = self.ray.remote(num_returns="streaming", max_retries=0)(job_stream)
        self.num_cpus = num_cpus
        from uh_core.distributed.pool import WorkerPool

        # The slots: service pools found, the others started now and not waited for (they
        # start, and import the job code, while the head bundles the source).
        self.pool = WorkerPool(self.ray, num_cpus)
        self._source: Any = None

    def share(self, source: JobSource) -> None:
        self._source = self.ray.put(source)

    def placement(self, runtime: str | None) -> tuple[dict[str, float], str | None]:
        return cluster.placement(self.ray, runtime)

    def submit(self, job: RuntimeJob | HarnessJob, resources: dict[str, float]) -> Submitted:
        return Submitted(job, resources)

    def _send(self, sent: Submitted, member: Member | None) -> Any:
        args = (sent.job.model_dump_json(by_alias=True), self._source, self.control)
        if member is not None:
            return member.handle.run.options(num_returns="streaming").remote(*args)
        return self._task.options(num_cpus=self.num_cpus, resources=sent.resources).remote(*args)

    def cancel_all(self, reason: str) -> None:
        self.control.cancel.remote(None, reason)

    def follow(
        self, sent: Submitted, job_id: str, token: CancelToken, sink: Sink,
        progress: Callable[[str], None],
    ) -> Followed:  # fmt: skip
        """The job sent to a warm slot (or, when no slot serves it, as a task of its own)
        and followed to its end; the slot is the run's again afterwards."""
        member = self.pool.acquire(job_id, sent.resources, lambda: token.reason)
        if member is None and token.reason is not None:  # stopped waiting for a slot
            return Followed(failure=f"the run stopped: {token.reason}", unstarted=True)
        stream = self._send(sent, member)
        seen = Followed()
        try:
            return self._follow(stream, member, job_id, token, sink, progress, seen)
        finally:
            if member is not None:
                self.pool.release(member, job_id, sent=True)

    def _follow(
        self, stream: Any, member: Member | None, job_id: str, token: CancelToken,
        sink: Sink, progress: Callable[[str], None], seen: Followed,
    ) -> Followed:  # fmt: skip
        ray = self.ray
        cancelled_at: float | None = None
        while True:
            if token.reason is not None and seen.node is None:
                ray.cancel(stream)  # still queued for a node: it never starts
                # …or it started and its first line is on the way: the flag stops it.
                self.control.cancel.remote(job_id, token.reason)
                seen.failure, seen.unstarted = f"the run stopped: {token.reason}", True
                return seen
            if token.reason is not None and cancelled_at is None:
                cancelled_at = time.monotonic()
                self.control.cancel.remote(job_id, token.reason)
            if cancelled_at is not None and time.monotonic() - cancelled_at > CANCEL_GRACE_S:
                if member is None:
                    ray.cancel(stream, force=True)
                else:  # an actor's task cannot be forced: the slot goes (a service one restarts)
                    self.pool.lost(member, kill=True)
                where = seen.node.label() if seen.node else "its node"
                seen.failure = (
                    f"cancelled: the job on {where} did not stop within {CANCEL_GRACE_S:g} s"
                )
                return seen
            ready, _ = ray.wait([stream], timeout=_WAIT_S)
            if not ready:
                continue
            try:
                ref = next(stream)
                item = StreamItem.model_validate_json(ray.get(ref))
            except StopIteration:
                seen.failure = seen.failure or "the job ended without a result"
                return seen
            except Exception as exc:  # RayError: the worker, its node or the task died
                if member is not None:
                    self.pool.lost(member, kill=False)
                seen.failure = self._died(exc, seen.node)
                return seen
            if item.kind == "node":
                seen.node = item.node
                if item.node is not None and item.node.pid is not None:
                    progress(f"{job_id}: on {item.node.label()}, warm worker pid "
                             f"{item.node.pid} ({item.node.pool} pool)")  # fmt: skip
            elif item.kind == "events" and seen.node is not None:
                sink(tag(item.lines, seen.node), seen.node)
            elif item.kind == "events":
                sink(item.lines, NodeInfo(node_id="?"))
            elif item.kind == "progress":
                progress(item.text)
            elif item.kind == "result":
                seen.result = item.result
                return seen

    def _died(self, exc: Exception, node: NodeInfo | None) -> str:
        where = node.label() if node is not None else "a node that never reported"
        text = str(exc).strip().splitlines()
        first = next((line for line in text if line.strip()), type(exc).__name__)
        first = first.split(". ")[0]  # Ray's first sentence; the rest is advice for Ray users
        return f"the job on {where} ended without a result ({type(exc).__name__}): {first[:300]}"

    def close(self) -> None:
        try:
            if self.ray.is_initialized():
                self.pool.close()
                self.ray.shutdown()
        finally:
            sys.stdout = self._stdout
