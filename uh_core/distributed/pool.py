"""Warm workers: job slots that outlive a job, so a job does not wait for Ray to start a
worker process (and import the job code) — a second or more on a busy machine, paid per
slot by every command, since Ray's task workers belong to the driver that started them.

A slot is a ``JobWorker`` actor (``uh_core.distributed.remote``) pinned to one node, holding
one job's CPUs. Two kinds:

- **service** — named, detached actors (``uh-pool-<node>-<n>`` in Ray namespace ``uh``)
  that ``uh-core worker`` makes for its node (``start_service``). They outlive every run:
  each run finds them (``discover``) and reuses them. They live inside uh's cluster, so
  they are behind its token like everything else (``uh_core.distributed.auth``).
- **run** — made by a command for each node no service pool covers, one per CPU slot, at
  its start (while the head bundles the source); they end with the command.

The head picks the slot for each job itself (``acquire``): an idle one on a node that
advertises the job's runtime, claimed on the actor before the job is sent (the claim keeps
two heads off one slot, and ends with the job). A slot that is dead or does not answer is
dropped from the run; a job no slot can serve runs as a Ray task of its own, as before.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uh_core.distributed.cluster import RESOURCE_PREFIX

SERVICE_PREFIX = "uh-pool-"
NAMESPACE = "uh"  # the namespace every uh driver connects in (cluster.connect)
MAX_SLOTS = 64
_ASK_S = 10.0  # a living slot answers a claim at once; one that does not is dropped
_IDLE_WAIT_S = 0.05
_REDISCOVER_S = 5.0  # while a job waits: look for service slots again this often
_THREADS = 4  # a job, plus claim/about answering meanwhile


@dataclass(eq=False)
class Member:
    handle: Any
    node_id: str
    runtimes: frozenset[str]  # the node's uh_runtime_* resources
    pool: str  # "service" or "run"
    name: str = ""  # a service slot's actor name
    ready: Any = None  # the ref of its first answer (a run slot may still be starting)
    busy: bool = False

    def serves(self, wanted: dict[str, float]) -> bool:
        return all(name in self.runtimes for name in wanted)


def _alive_nodes(ray: Any) -> dict[str, dict[str, float]]:
    return {n["NodeID"]: dict(n["Resources"]) for n in ray.nodes() if n["Alive"]}


def _runtimes(resources: dict[str, float]) -> frozenset[str]:
    return frozenset(name for name in resources if name.startswith(RESOURCE_PREFIX))


def _worker_class(ray: Any, num_cpus: float) -> Any:
    from uh_core.distributed.remote import JobWorker

    return ray.remote(num_cpus=num_cpus, max_concurrency=_THREADS)(JobWorker)


def _pinned(node_id: str) -> Any:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id=node_id, soft=False)


def service_names(ray: Any, node_id: str | None = None) -> list[str]:
    prefix = SERVICE_PREFIX + (node_id[:16] if node_id else "")
    return sorted(n for n in ray.util.list_named_actors() if n.startswith(prefix))


def start_service(
    ray: Any, node_id: str | None = None, slots: int | None = None, num_cpus: float = 1.0
) -> list[str]:
    """This node's service pool (the driver's node unless ``node_id``): one detached,
    named slot per CPU (or ``slots``), waited for until each answers. Slots already there
    are kept (``get_if_exists``); a slot that dies is restarted by Ray on its node."""
    node_id = node_id or ray.get_runtime_context().get_node_id()
    nodes = _alive_nodes(ray)
    if node_id not in nodes:
        raise ValueError(f"no live node {node_id} in the cluster")
    count = slots if slots is not None else int(nodes[node_id].get("CPU", 0) // num_cpus)
    worker = _worker_class(ray, num_cpus)
    names = [f"{SERVICE_PREFIX}{node_id[:16]}-{n}" for n in range(1, count + 1)]
    handles = [
        worker.options(
            name=name, namespace=NAMESPACE, lifetime="detached", get_if_exists=True,
            max_restarts=-1, scheduling_strategy=_pinned(node_id),
        ).remote("service")
        for name in names
    ]  # fmt: skip
    ray.get([h.about.remote() for h in handles], timeout=180)
    return names


def stop_service(ray: Any, node_id: str | None = None) -> list[str]:
    """The service pool's slots (of one node, or all) killed for good."""
    stopped = []
    for name in service_names(ray, node_id):
        try:
            ray.kill(ray.get_actor(name, namespace=NAMESPACE), no_restart=True)
        except ValueError:  # gone meanwhile
            continue
        stopped.append(name)
    return stopped


class WorkerPool:
    """One command's slots: the service pools it found, and slots of its own on every
    other node. ``acquire``/``release`` from one thread per job."""

    def __init__(self, ray: Any, num_cpus: float = 1.0) -> None:
        self.ray = ray
        self._lock = threading.Lock()
        nodes = _alive_nodes(ray)
        self.members: list[Member] = self.discover(nodes)
        covered = {m.node_id for m in self.members}
        worker = _worker_class(ray, num_cpus)
        for node_id, resources in nodes.items():
            if node_id in covered:
                continue
            for _ in range(int(resources.get("CPU", 0) // max(num_cpus, 1e-9))):
                if len(self.members) >= MAX_SLOTS:
                    break
                handle = worker.options(scheduling_strategy=_pinned(node_id)).remote("run")
                member = Member(handle, node_id, _runtimes(resources), "run")
                member.ready = handle.about.remote()  # not waited for: it starts meanwhile
                self.members.append(member)

    def discover(self, nodes: dict[str, dict[str, float]]) -> list[Member]:
        """The service slots that answer, on live nodes."""
        ray = self.ray
        found: list[tuple[str, Any, Any]] = []
        for name in service_names(ray):
            try:
                handle = ray.get_actor(name, namespace=NAMESPACE)
            except ValueError:
                continue
            found.append((name, handle, handle.about.remote()))
        if not found:
            return []
        ray.wait([ref for _, _, ref in found], num_returns=len(found), timeout=_ASK_S)
        members = []
        for name, handle, ref in found:
            try:
                about = ray.get(ref, timeout=0)
            except Exception:  # dead, restarting, or silent: not this run's
                continue
            if about["node_id"] in nodes:
                runtimes = _runtimes(nodes[about["node_id"]])
                members.append(Member(handle, about["node_id"], runtimes, "service", name))
        return members

    def _rediscover(self) -> None:
        """Service slots that answer now and were not found at the start (one restarting
        then, say: it holds its node's CPU again, so this run's own slot there may never
        start) join the run."""
        fresh = self.discover(_alive_nodes(self.ray))
        with self._lock:
            known = {m.name for m in self.members if m.name}
            self.members += [m for m in fresh if m.name not in known]

    def _ready(self, member: Member) -> bool | None:
        """True: it answers; False: still starting; None: it died starting."""
        if member.ready is None:
            return True
        done, _ = self.ray.wait([member.ready], timeout=0)
        if not done:
            return False
        try:
            self.ray.get(member.ready, timeout=0)
        except Exception:
            return None
        member.ready = None
        return True

    def _drop(self, member: Member) -> None:
        with self._lock:
            if member in self.members:
                self.members.remove(member)

    def acquire(
        self, job_id: str, wanted: dict[str, float], stopped: Callable[[], str | None]
    ) -> Member | None:
        """An idle slot that serves ``wanted``, claimed for ``job_id``; waits while every
        such slot is busy or starting. None: no slot serves it (run it as a task), or the
        run stopped meanwhile (``stopped()`` says so)."""
        looked = time.monotonic()
        while stopped() is None:
            with self._lock:
                fitting = [m for m in self.members if m.serves(wanted)]
                idle = [m for m in fitting if not m.busy]
                for member in idle:
                    member.busy = True
            if not fitting:
                return None
            for n, member in enumerate(idle):
                if self._claim(member, job_id):
                    with self._lock:
                        for other in idle[n + 1 :]:
                            other.busy = False
                    return member
                with self._lock:
                    member.busy = False
            if time.monotonic() - looked >= _REDISCOVER_S:
                self._rediscover()
                looked = time.monotonic()
            time.sleep(_IDLE_WAIT_S)
        return None

    def _claim(self, member: Member, job_id: str) -> bool:
        ready = self._ready(member)
        if ready is None:
            self._drop(member)
        if not ready:
            return False
        try:
            claimed: bool = self.ray.get(member.handle.claim.remote(job_id), timeout=_ASK_S)
        except Exception:  # dead (killed, its node lost) or not answering: not this run's
            self._drop(member)
            return False
        return claimed

    def release(self, member: Member, job_id: str, *, sent: bool) -> None:
        """The slot back to the run. ``sent=False``: the job never went; the claim given
        back on the actor too (a sent job's claim ends with the job, on the actor)."""
        if not sent:
            member.handle.release.remote(job_id)
        with self._lock:
            member.busy = False

    def lost(self, member: Member, *, kill: bool) -> None:
        """A slot this run stops using: dead, or (``kill``) stuck in a job that will not
        stop — killed then (a service slot is restarted on its node by Ray)."""
        self._drop(member)
        if kill:
            with contextlib.suppress(Exception):
                self.ray.kill(member.handle, no_restart=member.pool != "service")

    def close(self) -> None:
        """The run's own slots ended (a service pool stays for the next run)."""
        for member in self.members:
            if member.pool == "run":
                with contextlib.suppress(Exception):
                    self.ray.kill(member.handle, no_restart=True)
        self.members = []
