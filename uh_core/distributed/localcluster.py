"""A Ray cluster on this machine, on loopback: a head and worker nodes, each started with
``ray start`` in a session of its own, each advertising the resources it is given, stopped
(or killed, to simulate a lost machine) as a process group. The tests and
``benchmarks/harness_scaling.py`` use it; it is also a quick way to try ``--executor ray``
(docs/scale.md). Every node starts with token authentication (uh's token file, or the
operator's: ``uh_core.distributed.auth``); a driver needs ``auth`` too. Every port is chosen
free, so several clusters can run side by side, and
``ray stop`` (which stops every Ray process of the machine) is never used.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from uh_core.distributed.auth import auth_env
from uh_core.errors import ExecutorError

_START_TIMEOUT_S = 180.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Node:
    name: str
    group: int  # the process group of everything `ray start` started for this node
    resources: dict[str, float]


@dataclass
class LocalCluster:
    env: dict[str, str] = field(default_factory=dict)  # for the jobs: UH_WORKER_DIR…
    cpus: int = 2
    nodes: list[Node] = field(default_factory=list)
    address: str = ""
    folder: Path | None = None
    # Token authentication (uh_core.distributed.auth): what every node and driver gets.
    auth: dict[str, str] = field(default_factory=dict)

    def _ray(self) -> str:
        found = shutil.which("ray")
        if found is None:
            raise ExecutorError("the `ray` command is not installed", fix="pip install ray")
        return found

    def _start(self, name: str, args: list[str], resources: dict[str, float]) -> Node:
        assert self.folder is not None
        resources = {**resources, f"uh_node_{name}": 1.0}  # names the node (node_ids)
        env = {**os.environ, **self.env, **self.auth, "RAY_USAGE_STATS_ENABLED": "0"}
        log = self.folder / f"{name}.log"
        argv = [
            self._ray(), "start", *args, "--node-ip-address=127.0.0.1",
            f"--num-cpus={self.cpus}", f"--resources={json.dumps(resources)}",
            f"--dashboard-agent-listen-port={free_port()}", f"--metrics-export-port={free_port()}",
            f"--runtime-env-agent-port={free_port()}", "--disable-usage-stats",
            "--include-log-monitor=false",
        ]  # fmt: skip
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                argv, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
            node = Node(name, proc.pid, resources)
            self.nodes.append(node)
            try:
                code = proc.wait(_START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                code = None
        if code != 0:
            tail = log.read_text(errors="replace")[-2000:]
            raise ExecutorError(f"ray start for node {name} failed ({code}): {tail}")
        return node

    def start(self, head: dict[str, float], *workers: dict[str, float]) -> LocalCluster:
        # Short: Ray's unix sockets live under it (a socket path has at most 107 bytes).
        self.folder = Path(tempfile.mkdtemp(prefix="uhray-", dir="/tmp"))
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        self.auth = auth_env(create=True)  # uh's token (made if missing), or the operator's
        try:
            self._start(
                "head",
                ["--head", f"--port={port}", "--include-dashboard=false",
                 f"--temp-dir={self.folder}"],
                head,
            )  # fmt: skip
            for n, resources in enumerate(workers, 1):
                self._start(f"worker{n}", [f"--address={self.address}"], resources)
        except BaseException:
            self.stop()
            raise
        return self

    def add_worker(self, name: str, resources: dict[str, float]) -> Node:
        """One more worker node joining the running cluster."""
        return self._start(name, [f"--address={self.address}"], resources)

    def node_ids(self) -> dict[str, str]:
        """Each node's Ray node id, by name (matched on the resources it advertises)."""
        # Asked of the GCS with Ray's own client of it (a driver takes seconds to start);
        # where a Ray lacks that client, a driver. Ray's driver may print its own lines (a
        # lagging raylet, say) to stdout from another thread: the answer is the marked line.
        script = """
import json, sys
try:
    from ray._raylet import GcsClient
    found = GcsClient(address=sys.argv[1]).get_all_node_info()
    alive = [(i.hex(), dict(n.resources_total)) for i, n in found.items() if n.state == 0]
except (ImportError, AttributeError, TypeError):
    import ray
    ray.init(address=sys.argv[1], logging_level="ERROR", log_to_driver=False)
    alive = [(n["NodeID"], n["Resources"]) for n in ray.nodes() if n["Alive"]]
print("UH-NODES " + json.dumps(alive), flush=True)
"""
        env = {**os.environ, **self.env, **self.auth, "RAY_USAGE_STATS_ENABLED": "0"}
        out = subprocess.run(
            [sys.executable, "-c", script, self.address],
            capture_output=True, text=True, env=env, timeout=120, check=True,
        ).stdout  # fmt: skip
        marked = [line for line in out.splitlines() if line.startswith("UH-NODES ")]
        alive = json.loads(marked[-1].removeprefix("UH-NODES "))
        return {
            node.name: node_id
            for node in self.nodes
            for node_id, resources in alive
            if f"uh_node_{node.name}" in resources
        }

    def node(self, name: str) -> Node:
        return next(node for node in self.nodes if node.name == name)

    def kill(self, name: str) -> None:
        """The node lost at once, as a machine that dies: SIGKILL to its whole group and to
        every process below them (Ray's workers run in groups of their own, and so do the
        agents they start)."""
        group = self.node(name).group
        doomed = _descendants({pid for pid, (_, pgid) in _processes().items() if pgid == group})
        _signal_group(group, signal.SIGKILL)
        for pid in doomed:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        # Until the cluster has marked it dead, a new driver on this machine may still pick
        # its (dead) raylet, or Ray place an actor there: wait for the cluster to know.
        deadline = time.monotonic() + _START_TIMEOUT_S
        while name in self.node_ids() and time.monotonic() < deadline:
            time.sleep(0.5)
        self.nodes = [node for node in self.nodes if node.name != name]

    def stop(self) -> None:
        """Each node's processes stopped as ``ray stop`` orders it: the GCS last. A GCS sent
        SIGTERM while its raylet still runs does not exit (it waited out any grace); after
        the raylets, it exits at once."""
        groups = {node.group for node in self.nodes}
        deadline = time.monotonic() + 10
        for last in (False, True):
            for pid, name in _members(groups).items():
                if last or name != "gcs_server":
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGTERM)
            while time.monotonic() < deadline and any(
                last or name != "gcs_server" for name in _members(groups).values()
            ):
                time.sleep(0.1)
        for node in self.nodes:
            _signal_group(node.group, signal.SIGKILL)
        self.nodes.clear()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def _signal_group(group: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def _stats() -> dict[int, tuple[str, list[bytes]]]:
    """pid → (command name, the fields of /proc/PID/stat after it: state, ppid, pgrp…)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                head, rest = handle.read().rsplit(b")", 1)
        except (OSError, ValueError):
            continue
        found[int(entry)] = (head.split(b"(", 1)[-1].decode(errors="replace"), rest.split())
    return found


def _processes() -> dict[int, tuple[int, int]]:
    """pid → (parent pid, process group), from /proc."""
    return {pid: (int(f[1]), int(f[2])) for pid, (_, f) in _stats().items()}


def _members(groups: set[int]) -> dict[int, str]:
    """pid → command name of each living process of these groups. Not ``killpg(group, 0)``:
    a node's processes were reparented (``ray start`` exited), and where nothing reaps them
    (a container whose init does not) they stay zombies of the group, which that finds."""
    return {
        pid: name for pid, (name, f) in _stats().items() if int(f[2]) in groups and f[0] != b"Z"
    }


def _descendants(roots: set[int]) -> set[int]:
    table = _processes()
    found, todo = set(roots), list(roots)
    while todo:
        parent = todo.pop()
        for pid, (ppid, _) in table.items():
            if ppid == parent and pid not in found:
                found.add(pid)
                todo.append(pid)
    return found
