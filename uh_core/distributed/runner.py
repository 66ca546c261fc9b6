"""The head's side of Ray: submit a job, follow its stream, cancel, map faults.

One ``RayExecutor`` per command: connected once, one ``JobControl`` actor, the source
bundle put in the object store once and shared by every job. ``follow`` is called from one
thread per job; it hands event lines (tagged with the node) and progress lines to the
caller as they arrive, watches the run's cancel token, and returns the job's result or why
there is none — a worker or node that died names the node it ran on. Jobs are not retried:
an agent run costs money and may have effects beyond its sandbox; ``--resume`` reruns.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from uh_core.distributed import cluster
from uh_core.jobs.model import HarnessJob, JobResult, JobSource, NodeInfo, RuntimeJob, StreamItem
from uh_core.runtime.run import CancelToken

CANCEL_GRACE_S = 60.0  # after the token: how long a worker has to stop its agent and report
_WAIT_S = 0.25
Sink = Callable[[list[bytes], NodeInfo], None]


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
        self._warm()
        self._source: Any = None

    def _warm(self) -> None:
        """One warm-up task per job slot of the cluster, not waited for: the workers start
        (and import the job code) while the head bundles the source and lands nothing yet."""
        from uh_core.distributed.remote import warm

        slots = int(self.ray.cluster_resources().get("CPU", 0) // max(self.num_cpus, 1))
        task = self.ray.remote(num_cpus=self.num_cpus, max_retries=0)(warm)
        self._warming = [task.remote() for _ in range(min(slots, 64))]

    def share(self, source: JobSource) -> None:
        self._source = self.ray.put(source)

    def placement(self, runtime: str | None) -> tuple[dict[str, float], str | None]:
        return cluster.placement(self.ray, runtime)

    def submit(self, job: RuntimeJob | HarnessJob, resources: dict[str, float]) -> Any:
        return self._task.options(num_cpus=self.num_cpus, resources=resources).remote(
            job.model_dump_json(by_alias=True), self._source, self.control
        )

    def cancel_all(self, reason: str) -> None:
        self.control.cancel.remote(None, reason)

    def follow(
        self, stream: Any, job_id: str, token: CancelToken, sink: Sink,
        progress: Callable[[str], None],
    ) -> Followed:  # fmt: skip
        ray = self.ray
        seen = Followed()
        cancelled_at: float | None = None
        while True:
            if token.reason is not None and seen.node is None:
                ray.cancel(stream)  # still queued for a node: it never starts
                seen.failure, seen.unstarted = f"the run stopped: {token.reason}", True
                return seen
            if token.reason is not None and cancelled_at is None:
                cancelled_at = time.monotonic()
                self.control.cancel.remote(job_id, token.reason)
            if cancelled_at is not None and time.monotonic() - cancelled_at > CANCEL_GRACE_S:
                ray.cancel(stream, force=True)
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
                seen.failure = self._died(exc, seen.node)
                return seen
            if item.kind == "node":
                seen.node = item.node
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
                self.ray.shutdown()
        finally:
            sys.stdout = self._stdout
