"""Warm workers (``uh_core.distributed.pool``) on the shared loopback cluster: a run's slot
serves job after job; a service pool made by ``uh-core worker --pool-only`` is found and
reused by later runs; a service slot that died is replaced, or the run falls back to slots
of its own; a cancel, or a head that is killed, still stops a job on a slot that outlives
the run. Each test that makes a service pool ends it (the cluster is shared)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.distributed.test_ray_harness import SECOND  # the same second mission
from tests.harness.conftest import Project
from tests.runtime.helpers import add_manifest, live_processes_with
from uh_core.distributed.localcluster import LocalCluster

SERVED = re.compile(r"warm worker pid (\d+) \((\w+) pool\)")
# "only" is advertised by the worker node alone: one slot serves it, whatever the timing.
ONLY = "runtime_kind: script\nstatus: active\nconfig:\n  script: 'true'\n"


def _served(stderr: str) -> list[tuple[int, str]]:
    return [(int(pid), pool) for pid, pool in SERVED.findall(stderr)]


def _ray(cluster: LocalCluster) -> tuple[str, ...]:
    return ("--executor", "ray", "--ray-address", cluster.address, "--format", "json")


def _only(project: Project) -> None:
    add_manifest(project.repo, "only", ONLY)
    project.repo.mission("second", SECOND)
    project.repo.commit("a runtime the worker node alone has, a second mission")


@contextmanager
def _service_pool(project: Project, cluster: LocalCluster, *nodes: str) -> Iterator[list[str]]:
    ids = cluster.node_ids()
    names: list[str] = []
    try:
        for node in nodes:
            made = project.repo.uh(
                "worker", "--address", cluster.address, "--pool-only", "--node", ids[node],
                "--json", timeout=300,
            )  # fmt: skip
            assert made.code == 0, made.stderr[-3000:]
            names += json.loads(made.stdout)["pool"]
        yield names
    finally:
        stopped = project.repo.uh("worker", "--address", cluster.address, "--stop-pool", "--json")
        assert stopped.code == 0, stopped.stderr[-3000:]


def test_a_runs_slot_serves_job_after_job(project: Project, cluster: LocalCluster) -> None:
    _only(project)
    result = project.run("--runtime", "only", "--jobs", "1", *_ray(cluster))
    assert result.stdout.strip(), result.stderr[-3000:]
    ledger = json.loads(result.stdout)
    assert [r["mission_id"] for r in ledger["requirements"]] == ["calc", "second"]
    assert all(r["node"] and r["outcome"] != "error" for r in ledger["requirements"]), ledger
    served = _served(result.stderr)
    assert len(served) == 2, result.stderr[-3000:]
    assert served[0] == served[1] and served[0][1] == "run", served  # one process, both jobs
    _ends(served[0][0], 30)  # a run's own slot ends with the run


def _ends(pid: int, within: float) -> None:
    deadline = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return
        if state == "Z":
            return
        assert time.monotonic() < deadline, f"the run's slot {pid} outlived its run"
        time.sleep(0.2)


def test_a_service_pool_is_found_and_reused_by_later_runs(
    project: Project, cluster: LocalCluster
) -> None:
    _only(project)
    with _service_pool(project, cluster, "worker1") as names:
        assert names and all(n.startswith("uh-pool-") for n in names), names
        first = project.run("--runtime", "only", "--req", "calc", *_ray(cluster))
        second = project.run("--runtime", "only", "--req", "second", *_ray(cluster))
        for result in (first, second):
            assert result.stdout.strip(), result.stderr[-3000:]
            [record] = json.loads(result.stdout)["requirements"]
            assert record["outcome"] != "error", record
        [(pid, pool)] = _served(first.stderr)
        assert pool == "service"
        assert _served(second.stderr) == [(pid, "service")]  # the same process, a later run
    # Ended: the next run makes slots of its own again.
    third = project.run("--runtime", "only", "--req", "calc", "--force", *_ray(cluster))
    [(other, pool)] = _served(third.stderr)
    assert pool == "run" and other != pid


def test_a_dead_service_slot_is_replaced_or_left_out(
    project: Project, cluster: LocalCluster
) -> None:
    _only(project)
    with _service_pool(project, cluster, "worker1"):
        first = project.run("--runtime", "only", "--req", "calc", *_ray(cluster))
        [(pid, _)] = _served(first.stderr)
        os.kill(pid, signal.SIGKILL)  # the slot's process dies between runs
        second = project.run("--runtime", "only", "--req", "second", *_ray(cluster))
        assert second.stdout.strip(), second.stderr[-3000:]
        [record] = json.loads(second.stdout)["requirements"]
        assert record["outcome"] != "error", (record, second.stderr[-3000:])
        [(other, pool)] = _served(second.stderr)
        # Ray restarts a service slot on its node; until it answers, the run uses its own.
        assert other != pid and pool in ("service", "run"), (other, pool)


def _wait_for(path: os.PathLike[str], run: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 180
    while not os.path.exists(path):
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.1)


def _gone(marker: str, within: float) -> None:
    deadline = time.monotonic() + within
    while live_processes_with(marker):
        assert time.monotonic() < deadline, f"{marker} outlived its run"
        time.sleep(0.2)


def test_cancel_and_a_lost_head_stop_a_job_on_a_service_slot(
    project: Project, cluster: LocalCluster
) -> None:
    started = project.agents / "slow.started"
    agent = project.agent(
        "slow", f'pathlib.Path({str(started)!r}).write_text("x")\nimport time\ntime.sleep(313)\n'
    )
    with _service_pool(project, cluster, "head", "worker1"):
        # Ctrl-C: the job stops, its attempt is recorded; the slot lives on for later runs.
        run = project.repo.start("harness", "run", "--agent", agent, *_ray(cluster),
                                 stderr=subprocess.PIPE)  # fmt: skip
        try:
            _wait_for(started, run)
            run.send_signal(signal.SIGINT)
            out, err = run.communicate(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
        assert run.returncode == 130, err[-3000:]
        [record] = json.loads(out)["requirements"]
        assert record["attempts"][-1]["outcome"] == "interrupted", record
        [(pid, pool)] = _served(err)
        assert pool == "service"
        _gone(str(project.agents / "slow.py"), 30)
        # The head killed outright: the slot's job sees its head gone and stops its agent.
        started.unlink()
        run = project.repo.start("harness", "run", "--agent", agent, "--force", *_ray(cluster),
                                 stderr=subprocess.PIPE)  # fmt: skip
        try:
            _wait_for(started, run)
            run.kill()
            _, err = run.communicate(timeout=60)
        finally:
            if run.poll() is None:
                run.kill()
        assert _served(err) == [(pid, "service")]  # the slot the cancelled job left
        _gone(str(project.agents / "slow.py"), 60)
