"""A real Ray cluster on loopback for the distributed tests: a head and a worker node, each
started with ``ray start`` (``LocalCluster``), one runtime advertised only by the worker,
with Ray's token authentication on. One cluster per test session (and xdist worker); a test
that kills a node adds its own. Its token file is the operator-supplied kind
(``RAY_AUTH_TOKEN_PATH``, set for the session), so every ``uh-core`` the tests start finds it
whatever their ``UH_STATE_DIR``."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.conftest import project, project_template  # noqa: F401  (the fixtures)
from uh_core.distributed.cluster import SLOTS, runtime_resource
from uh_core.distributed.localcluster import LocalCluster

# "one" and "two" run anywhere, "only" only on the worker node; nobody has "none".
HEAD = {runtime_resource("one"): SLOTS, runtime_resource("two"): SLOTS}
WORKER = {**HEAD, runtime_resource("only"): SLOTS}
# A killed node is known dead once the head's health checks of its raylet fail this many
# times in a row, one check per period: Ray's defaults (3 s x 5) make that 15 s and more.
# On loopback a dead raylet refuses the connection at once; a live but starved one still
# has each check's whole timeout (Ray's default, 10 s) to answer.
FAST_DEATH = {"RAY_health_check_period_ms": "300", "RAY_health_check_failure_threshold": "3"}


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (pip install 'ultimate-harness[ray]')")
    folder: Path = tmp_path_factory.mktemp("ray-jobs")
    env = {
        "UH_WORKER_DIR": str(folder / "worker"),
        "UH_STATE_DIR": str(folder / "state"),
        **FAST_DEATH,
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_AUTH_TOKEN_PATH", str(folder / "ray-token"))  # made by start()
        patch.delenv("RAY_AUTH_TOKEN", raising=False)
        # One job slot a node: a run starts a warm worker for every slot of the cluster no
        # service pool covers (uh_core.distributed.pool), and the machine may have two
        # cores in all.
        found = LocalCluster(env=env, cpus=1)
        found.start(HEAD, WORKER)
        try:
            yield found
        finally:
            found.stop()
