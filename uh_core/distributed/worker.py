"""``uh-core worker``: make this machine a node of the cluster, advertising what it can run.

Each runtime whose manifest's ``adapter check`` passes here becomes a Ray custom resource
``uh_runtime_<id>`` (``SLOTS`` of it: jobs are limited by CPUs, not by this), so
``--executor ray`` places that runtime's jobs only on machines that have it. The manifests
are the workspace's (``--root``) when there is one, else the built-in ones. The command run
is ``ray start`` itself, with token authentication (``uh_core.distributed.auth``: a head
makes uh's token file when there is none, a joining node needs the head's token);
``--dry-run`` prints it instead, with the variables' names and the token's file, never the
token.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from typing import Any

from uh_core.distributed.cluster import SLOTS, runtime_resource
from uh_core.errors import ExecutorError, UsageError
from uh_core.layout import Layout
from uh_core.models.adapter import AdapterManifest


@dataclass
class Offer:
    runtimes: list[str] = field(default_factory=list)  # what this node will advertise
    missing: dict[str, str] = field(default_factory=dict)  # runtime → why not here
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # token authentication (no secret)

    def as_dict(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "runtimes": self.runtimes,
            "resources": {runtime_resource(r): SLOTS for r in self.runtimes},
            "missing": self.missing,
            "command": self.argv,
        }


def _manifests(layout: Layout | None) -> list[AdapterManifest]:
    from uh_core.adapters.manifests import load_all_manifests
    from uh_core.adapters.registry import builtin_manifests

    if layout is not None and layout.adapters_dir.is_dir():
        found, _broken = load_all_manifests(layout)
        return found
    return [AdapterManifest.model_validate(m) for m in builtin_manifests().values()]


def offer(
    layout: Layout | None,
    address: str | None,
    *,
    head: bool = False,
    port: int | None = None,
    wanted: list[str] | None = None,
    cpus: int | None = None,
    block: bool = False,
) -> Offer:
    from uh_core.adapters.registry import make_adapter
    from uh_core.errors import AdapterError

    if head == (address is not None):
        raise UsageError("give --address ADDR (join a cluster) or --head (start one)")
    manifests = {m.id: m for m in _manifests(layout)}
    unknown = sorted(set(wanted or ()) - set(manifests))
    if unknown:
        raise UsageError(f"--runtimes names unknown runtimes: {', '.join(unknown)}",
                         fix=f"known here: {', '.join(sorted(manifests)) or 'none'}")  # fmt: skip
    result = Offer()
    for runtime_id in wanted or sorted(manifests):
        try:
            available = make_adapter(manifests[runtime_id]).check()
            ok, why = available.ok, available.reason or "not available"
        except AdapterError as exc:
            ok, why = False, exc.one_line()
        if ok:
            result.runtimes.append(runtime_id)
        else:
            result.missing[runtime_id] = why
    if wanted and result.missing:
        first = sorted(result.missing.items())[0]
        raise ExecutorError(f"runtime {first[0]} cannot run on this machine: {first[1]}",
                            fix="install it, or leave it out of --runtimes")  # fmt: skip
    ray = shutil.which("ray") or "ray"
    resources = json.dumps({runtime_resource(r): SLOTS for r in result.runtimes})
    where = ["--head", *([f"--port={port}"] if port else [])] if head else [f"--address={address}"]
    result.argv = [ray, "start", *where, f"--resources={resources}", "--disable-usage-stats"]
    if cpus is not None:
        result.argv.append(f"--num-cpus={cpus}")
    if block:
        result.argv.append("--block")
    return result


def start_env(head: bool, *, dry_run: bool) -> dict[str, str]:
    """What ``ray start`` gets for token authentication. A head makes uh's token when there
    is none (not on a dry run, which only says where it would be); a node joining needs the
    head's token already (an error names the file)."""
    from uh_core.distributed import auth

    if dry_run:
        if os.environ.get(auth.TOKEN, "").strip():
            return {auth.MODE: "token", auth.TOKEN: "(from the environment)"}
        return {auth.MODE: "token", auth.TOKEN_PATH: str(auth.token_file())}
    return auth.auth_env(create=head)


def start_pool(
    address: str | None, node_id: str | None = None, slots: int | None = None
) -> list[str]:
    """This node's warm service pool (``uh_core.distributed.pool.start_service``): a driver
    connected to the cluster (with its token) makes the detached slots and leaves; they
    stay, and every later run reuses them. The node is the driver's own (the machine's
    raylet) unless ``node_id`` names another."""
    from uh_core.distributed.cluster import connect
    from uh_core.distributed.pool import start_service

    ray = connect(address)
    try:
        return start_service(ray, node_id, slots)
    finally:
        ray.shutdown()


def stop_pool(address: str | None, node_id: str | None = None) -> list[str]:
    """The service pool's slots (this node's with ``node_id``, else every node's) ended."""
    from uh_core.distributed.cluster import connect
    from uh_core.distributed.pool import stop_service

    ray = connect(address)
    try:
        return stop_service(ray, node_id)
    finally:
        ray.shutdown()
