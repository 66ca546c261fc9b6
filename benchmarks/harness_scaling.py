#!/usr/bin/env python3
"""Missions in parallel, side by side in one run: ``harness run`` over 8 missions whose
scripted agent sleeps 2 s — serial (``--jobs 1``), ``--jobs 4`` on this machine, and
``--jobs 4 --executor ray`` on a local Ray cluster on loopback (a head and a worker node,
2 CPUs each, started here with ``ray start``; the cluster's start is not timed) twice: with
the run's own warm slots (started by the run), and with a warm service pool on each node
(``uh-core worker --pool-only``, made before the round and ended after it, not timed) —
what an operator who runs ``uh-core worker`` as a service gets.

Each variant runs on a fresh clone of the same repository (``--force`` is never needed).
Reported per variant: wall time (median of ``--rounds``), the ratio to serial, and each
mission's own duration from the ledger. Targets: ``--jobs 4`` <= 0.35x serial; Ray's cost
per job <= 1 s over the local executor, measured as the difference of the mean mission
duration (a job's whole path: bundle shared once, placement, the worker's clone, the
run, the result landed) and, for the whole run, (ray wall - local wall) / missions x jobs.

This script only reports: it never fails because a target is missed.

    python benchmarks/harness_scaling.py [--missions 8] [--sleep 2] [--rounds 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from uh_core.distributed.localcluster import LocalCluster
from uh_core.init import init_project
from uh_core.layout import Layout

JOBS = 4
SERVICE_TARGET_S = 0.3  # a service pool's per-job cost over local
GIT_ENV = {
    "GIT_AUTHOR_NAME": "uh bench", "GIT_AUTHOR_EMAIL": "bench@uh.invalid",
    "GIT_COMMITTER_NAME": "uh bench", "GIT_COMMITTER_EMAIL": "bench@uh.invalid",
}  # fmt: skip
AGENT = """\
import pathlib, re, sys, time
prompt = pathlib.Path(sys.argv[1]).read_text()
name = re.search(r"out/(m\\d+)\\.txt", prompt).group(1)
time.sleep(float(sys.argv[2]))
pathlib.Path("out").mkdir(exist_ok=True)
pathlib.Path(f"out/{name}.txt").write_text(name + "\\n")
"""


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def build(folder: Path, missions: int) -> Path:
    root = folder / "origin"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# bench\n")
    init_project(Layout(root))
    for n in range(1, missions + 1):
        mission = root / f".harness/missions/m{n}/mission.yaml"
        mission.parent.mkdir(parents=True, exist_ok=True)
        mission.write_text(
            f"id: m{n}\ntitle: write out/m{n}.txt\nstatus: pending\n"
            f"objective: write out/m{n}.txt\nacceptance_criteria:\n  - id: written\n"
            f"    description: the file exists\n    check_command: test -f out/m{n}.txt\n"
            f"expected_outputs:\n  files: [out/m{n}.txt]\n"
        )
    (root / "harness.config.yaml").write_text("harness_version: 1\nmax_attempts: 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "missions")
    return root


SERVICE = f"ray --jobs {JOBS} + service pool"
TRUSTED = f"{SERVICE}, --trust-workers"


def run(origin: Path, folder: Path, name: str, agent: str, *extra: str) -> dict:
    clone = folder / name
    shutil.rmtree(clone, ignore_errors=True)
    git(origin.parent, "clone", "-q", str(origin), str(clone))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "uh_core", "harness", "run", "--agent", agent, "--format", "json",
         "--root", str(clone), *extra],
        capture_output=True, text=True, env={**os.environ, **GIT_ENV},
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name}: exit {done.returncode}: {done.stderr[-2000:]}")
    ledger = json.loads(done.stdout)
    outcomes = [r["outcome"] for r in ledger["requirements"]]
    if set(outcomes) != {"pass"}:
        raise SystemExit(f"{name}: not every mission passed: {outcomes}")
    durations = [r["duration_ms"] / 1000 for r in ledger["requirements"]]
    phases: dict[str, list[float]] = {}
    for record in ledger["requirements"]:
        timings = dict(record.get("job_timings") or {})
        if timings:  # Ray: the rest of the head's total is queueing, worker start, transport
            known = sum(v for k, v in timings.items() if k != "total_s")
            timings["wait_s"] = timings["total_s"] - known
        for key, value in timings.items():
            phases.setdefault(key, []).append(value)
    means = {k: statistics.mean(v) for k, v in phases.items()}
    return {"wall_s": wall, "mission_s": statistics.mean(durations), "phases": means}


def service_pool(cluster: LocalCluster, stop: bool = False) -> None:
    """A warm service pool on every node (``uh-core worker --pool-only``), or ended."""
    env = {**os.environ, **cluster.auth}
    if stop:
        argv = [sys.executable, "-m", "uh_core", "worker", "--address", cluster.address,
                "--stop-pool"]  # fmt: skip
        subprocess.run(argv, env=env, check=True, capture_output=True, timeout=300)
        return
    for node_id in cluster.node_ids().values():
        argv = [sys.executable, "-m", "uh_core", "worker", "--address", cluster.address,
                "--pool-only", "--node", node_id]  # fmt: skip
        subprocess.run(argv, env=env, check=True, capture_output=True, timeout=300)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missions", type=int, default=8)
    parser.add_argument("--sleep", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--trusted", action="store_true",
                        help="also the service pool with --trust-workers (no re-judge on the "
                        "head): what the head's re-judge costs")  # fmt: skip
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="uh-scaling-"))
    os.environ["UH_STATE_DIR"] = str(folder / "state")
    script = folder / "agent.py"
    script.write_text(AGENT)
    agent = f"{sys.executable} {script} {{prompt_file}} {args.sleep}"
    origin = build(folder, args.missions)
    cluster = LocalCluster(env={"UH_WORKER_DIR": str(folder / "worker")}, cpus=2)
    try:
        cluster.start({}, {})
        ray = ("--executor", "ray", "--ray-address", cluster.address)
        variants = {
            "serial": ("--jobs", "1"),
            f"local --jobs {JOBS}": ("--jobs", str(JOBS)),
            f"ray --jobs {JOBS}": ("--jobs", str(JOBS), *ray),
        }
        run(origin, folder, "warm", agent, "--jobs", str(JOBS), *ray)  # workers started
        pooled = {SERVICE: ("--jobs", str(JOBS), *ray)}
        if args.trusted:
            pooled[TRUSTED] = (*pooled[SERVICE], "--trust-workers")
        seen: dict[str, list[dict]] = {name: [] for name in [*variants, *pooled]}
        for n in range(args.rounds):
            for name, extra in variants.items():
                seen[name].append(run(origin, folder, f"r{n}-{name.split()[0]}", agent, *extra))
            service_pool(cluster)
            try:
                for name, extra in pooled.items():
                    tag = "trusted" if name == TRUSTED else "service"
                    seen[name].append(run(origin, folder, f"r{n}-{tag}", agent, *extra))
            finally:
                service_pool(cluster, stop=True)
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
    report = {
        name: {
            "wall_s": statistics.median(r["wall_s"] for r in rows),
            "walls_s": [round(r["wall_s"], 2) for r in rows],
            "mission_s": statistics.median(r["mission_s"] for r in rows),
            "phases": {
                key: statistics.median(r["phases"][key] for r in rows) for key in rows[0]["phases"]
            },
        }
        for name, rows in seen.items()
    }
    serial = report["serial"]["wall_s"]
    local, remote = report[f"local --jobs {JOBS}"], report[f"ray --jobs {JOBS}"]
    service = report[SERVICE]
    figures = {
        "missions": args.missions, "sleep_s": args.sleep, "rounds": args.rounds,
        "variants": report,
        "jobs4_vs_serial": local["wall_s"] / serial,
        "ray_vs_serial": remote["wall_s"] / serial,
        "ray_cost_per_job_s": remote["mission_s"] - local["mission_s"],
        "ray_steady_cost_per_job_s": sum(
            remote["phases"].get(k, 0.0) for k in ("materialise_s", "pack_s", "land_s")
        ),
        "ray_wall_cost_per_job_s": (remote["wall_s"] - local["wall_s"]) / args.missions * JOBS,
        "service_cost_per_job_s": service["mission_s"] - local["mission_s"],
        "service_wall_cost_per_job_s": (
            (service["wall_s"] - local["wall_s"]) / args.missions * JOBS
        ),
        "service_target_s": SERVICE_TARGET_S,
        "local_mission_s": local["mission_s"],
    }  # fmt: skip
    if TRUSTED in report:
        figures["trusted_cost_per_job_s"] = report[TRUSTED]["mission_s"] - local["mission_s"]
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"harness run, {args.missions} missions, agent sleeps {args.sleep:g} s, "
          f"median of {args.rounds} round(s)")  # fmt: skip
    for name, row in report.items():
        print(f"  {name:<44} wall {row['wall_s']:6.2f} s  ({row['wall_s'] / serial:4.2f}x serial)"
              f"  mission {row['mission_s']:5.2f} s  rounds {row['walls_s']}")  # fmt: skip
    print(f"--jobs {JOBS} vs serial: {figures['jobs4_vs_serial']:.2f}x (target <= 0.35x)")
    print(
        f"ray cost per job over local: {figures['ray_cost_per_job_s']:+.2f} s per mission "
        f"(dispatch to landed, against the local mission's own time), "
        f"{figures['ray_wall_cost_per_job_s']:+.2f} s per job of wall time (target <= 1 s)"
    )
    phases = "  ".join(f"{k} {v:.2f}" for k, v in remote["phases"].items())
    print(f"ray per-job phases (s, mean): {phases}")
    print(
        f"  of which the job's own path (clone + pack + land): "
        f"{figures['ray_steady_cost_per_job_s']:.2f} s; the rest of wait_s is the run's own "
        f"slots starting (a worker process each, once per run), and queueing"
    )
    cost = figures["service_cost_per_job_s"]
    verdict = "met" if cost <= SERVICE_TARGET_S else "MISSED"
    print(
        f"ray with a warm service pool: {cost:+.2f} s per job over local "
        f"(baseline: local --jobs {JOBS}, mission {local['mission_s']:.2f} s, this run; "
        f"ray {service['mission_s']:.2f} s; {service['mission_s'] / local['mission_s']:.2f}x), "
        f"{figures['service_wall_cost_per_job_s']:+.2f} s per job of wall time; "
        f"target <= {SERVICE_TARGET_S:g} s: {verdict}"
    )
    phases = "  ".join(f"{k} {v:.2f}" for k, v in service["phases"].items())
    print(f"service pool per-job phases (s, mean): {phases}")
    if TRUSTED in report:
        trusted = report[TRUSTED]
        phases = "  ".join(f"{k} {v:.2f}" for k, v in trusted["phases"].items())
        print(f"  with --trust-workers (no re-judge on the head): "
              f"{figures['trusted_cost_per_job_s']:+.2f} s per job; phases: {phases}")  # fmt: skip


if __name__ == "__main__":
    main()
