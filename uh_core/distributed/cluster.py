"""Connecting to the cluster and placement by capability.

A node advertises each runtime it can run as a Ray custom resource ``uh_runtime_<id>``
(``uh-core worker`` sets them from the runtimes whose ``adapter check`` passes there, or
``ray start --resources``). A job for runtime X asks for a sliver of ``uh_runtime_X``, so it
is only placed on such a node; when no node of the cluster has it, the job is never
submitted: it ends ``blocked`` saying so. ``--agent`` commands need no resource (any node
with uh can run a shell command; the command's own files must be there too).
"""

from __future__ import annotations

import os
from typing import Any

from uh_core.distributed import auth
from uh_core.errors import ExecutorError

RESOURCE_PREFIX = "uh_runtime_"
SLOTS = 1000  # what a node advertises per runtime: jobs are limited by CPUs, not by this
JOB_SHARE = 1.0


def runtime_resource(runtime: str) -> str:
    return f"{RESOURCE_PREFIX}{runtime}"


def ray_module() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorError(
            "--executor ray needs Ray, which is not installed",
            fix="pip install 'ultimate-harness[ray]'",
        ) from None
    return ray


def address(given: str | None) -> str:
    found = given or os.environ.get("RAY_ADDRESS")
    if not found:
        raise ExecutorError(
            "--executor ray needs a cluster: no --ray-address and no RAY_ADDRESS",
            fix="start one (`ray start --head`, then `uh-core worker --address ADDR` on each "
            "machine) and pass --ray-address HOST:PORT",
        )
    return found


def connect(given: str | None) -> Any:
    """``ray`` connected to the cluster at ``--ray-address``/``RAY_ADDRESS`` (never a new
    local cluster started behind the operator's back), with the cluster's token
    (``uh_core.distributed.auth``: set before Ray is imported, which reads it then)."""
    where = address(given)
    auth.apply()
    ray = ray_module()
    if ray.is_initialized():
        return ray
    try:
        ray.init(
            address=where, namespace="uh", logging_level="ERROR", log_to_driver=False,
            configure_logging=False,
        )  # fmt: skip
    except Exception as exc:  # ConnectionError, RuntimeError…: one line, named
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ExecutorError(
            f"cannot reach the Ray cluster at {where}: {first}",
            fix="check the address (`ray status --address HOST:PORT`), that the head runs, and "
            f"that {auth.token_file()} (or RAY_AUTH_TOKEN_PATH) holds the cluster's token",
        ) from None
    return ray


def advertised(ray: Any) -> dict[str, float]:
    """Each ``uh_runtime_*`` resource of the live nodes, summed."""
    return {
        name: amount
        for name, amount in ray.cluster_resources().items()
        if name.startswith(RESOURCE_PREFIX)
    }


def placement(ray: Any, runtime: str | None) -> tuple[dict[str, float], str | None]:
    """The resources a job asks for, and why no node can run it (None: some node can)."""
    if runtime is None:
        return {}, None
    name = runtime_resource(runtime)
    if advertised(ray).get(name, 0) <= 0:
        return {name: JOB_SHARE}, (
            f"no node of the Ray cluster advertises runtime {runtime} ({name}): start "
            f"`uh-core worker --address ADDR` on a machine where it is installed"
        )
    return {name: JOB_SHARE}, None
