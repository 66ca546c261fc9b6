#!/usr/bin/env python3
"""Issue 30, figure 3: the whole gate on a 500-test suite, confined against unconfined
(target <= 1.15x).

Builds a throw-away git repository (``gate_overhead.build_project``: ``src/calc.py``,
``--tests`` trivially-passing pytest tests, one mission with one acceptance criterion and a
required test, a scripted agent that adds a function and its test), with ``test_cmd:
python -m pytest -q -p no:cacheprovider`` and ``non_regression: false`` (the base-commit
run is off; ``--non-regression`` turns it on, and then every counted round finds it cached:
round 0 fills the cache). Then, in interleaved rounds (the order reversed every other
round; round 0 warms up and is not counted), runs ``uh-core harness run --force`` with
``--isolation bwrap`` and with ``--isolation none`` and reads, from the ledger
(``--format json``), the duration of each gate stage of the attempt
(``attempts[].stages[].duration_ms``): ``verify`` and ``tests`` (each its own room: a
pristine checkout of the judged tree, and under bwrap one confined session) and the whole
gate (every stage but the agent's). The whole run's wall time is shown for context (it also
holds the agent, confined or not), and the CPU of the run's whole process tree (this script
is a child subreaper, so a bubblewrap session's orphaned namespace init is reaped, and
counted, here). For context, the test command alone in a plain checkout as rooms run it
(no bytecode written) and as they ran it before, under a fresh and a warm
``PYTHONPYCACHEPREFIX`` (``--no-context`` skips it).

This script only reports: it never fails because a target is missed.
``UH_STATE_DIR`` points into the temporary folder, removed at the end, also on Ctrl-C.

    python benchmarks/judge_gate.py [--tests 500] [--runs 3] [--non-regression]
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gate_overhead import build_project, spawn
from judge_common import (
    Samples,
    adopt_orphans,
    cpu,
    load,
    order,
    ratio_spread,
    reap_orphans,
    spread,
    verdict,
)

PY = sys.executable
TEST_CMD = f"{PY} -m pytest -q -p no:cacheprovider"
TARGET = 1.15  # issue 30
MODES = ("bwrap", "none")


def configure(root: Path, agents: Path, non_regression: bool) -> None:
    """The issue's test command, and non-regression as asked; committed."""
    (root / "harness.config.yaml").write_text(
        f"harness_version: 1\ntest_cmd: {TEST_CMD}\nmax_attempts: 1\n"
        f"non_regression: {'true' if non_regression else 'false'}\n"
        f"isolation_writable: ['{agents}']\n"
    )
    spawn(["git", "add", "-A"], root)
    spawn(["git", "commit", "-q", "-m", "bench config"], root)


def harness_run(
    root: Path, agent: str, mode: str, non_regression: bool, counted: bool
) -> dict[str, Any]:
    """One run: {stage: duration_ms} of the attempt's gate, and the run's wall ms."""
    argv = [PY, "-m", "uh_core", "harness", "run", "--agent", agent, "--force"]
    argv += ["--isolation", mode, "--format", "json", "--root", str(root)]
    _own, kids = cpu()
    elapsed, out = spawn(argv, root, ok=1)
    reap_orphans()  # a session's namespace init, orphaned by bubblewrap: its CPU is counted
    tree_cpu = cpu()[1] - kids
    try:
        ledger: dict[str, Any] = json.loads(out)
        stages = ledger["requirements"][0]["attempts"][-1]["stages"]
    except (ValueError, KeyError, IndexError):
        sys.exit(f"no stages in the harness run's ledger: {out.decode()[-2000:]}")
    found = {s["stage"]: s for s in stages}
    for name in ("verify", "tests"):
        stage = found.get(name)
        if stage is None or not stage["passed"]:
            detail = stage.get("detail") if stage else "missing"
            sys.exit(f"{mode}: the {name} stage did not pass: {detail}")
    tests = found["tests"]
    confined = tests.get("evidence", {}).get("confined")
    if confined is not (mode == "bwrap"):
        sys.exit(f"{mode}: the tests stage says confined={confined}")
    base = tests.get("evidence", {}).get("base")
    if non_regression and counted and (not base or base.get("cached") is not True):
        sys.exit(f"{mode}: the base-commit run was not cached: {base}")
    if not non_regression and base:
        sys.exit(f"{mode}: non_regression is off but the stage ran the base: {base}")
    durations = {name: float(s["duration_ms"]) for name, s in found.items()}
    durations["gate"] = sum(v for k, v in durations.items() if k != "agent")
    durations["run (wall)"] = elapsed
    durations["run cpu"] = tree_cpu * 1000
    return durations


def command_alone(root: Path, tmp: Path, runs: int) -> dict[str, Samples]:
    """The test command run directly in a plain checkout: as rooms run it now (no bytecode
    written, ``PYTHONDONTWRITEBYTECODE``: the interpreter's installed bytecode is read), and
    as they ran it before, with a fresh ``PYTHONPYCACHEPREFIX`` (the standard library and
    pytest compiled anew each tests stage), and that prefix warm (filled by the run before)."""
    checkout = tmp / "alone"
    spawn(["git", "worktree", "add", "-q", "--detach", str(checkout), "HEAD"], root)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    found: dict[str, Samples] = {"now": Samples(), "fresh": Samples(), "warm": Samples()}
    for n in range(runs):
        prefix = tmp / f"pycache-{n}"
        for kind in ("now", "fresh", "warm"):  # the fresh run fills the prefix warm reads
            extra = (
                {"PYTHONDONTWRITEBYTECODE": "1"}
                if kind == "now"
                else {"PYTHONPYCACHEPREFIX": str(prefix)}
            )
            _own, kids = cpu()
            began = time.perf_counter()
            done = subprocess.run(
                TEST_CMD.split(),
                cwd=checkout,
                env={**env, **extra},
                stdin=subprocess.DEVNULL,
                capture_output=True,
                check=False,
            )
            wall = time.perf_counter() - began
            if done.returncode != 0:
                sys.exit(f"the test command alone failed: {done.stdout.decode()[-2000:]}")
            found[kind].add(wall, 0.0, cpu()[1] - kids)
        shutil.rmtree(prefix, ignore_errors=True)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=500, help="fast tests (default 500)")
    parser.add_argument("--runs", type=int, default=3, help="counted rounds (default 3)")
    parser.add_argument(
        "--non-regression",
        action="store_true",
        help="keep suite non-regression on (its base run cached after round 0)",
    )
    parser.add_argument(
        "--no-context",
        action="store_true",
        help="skip the test command alone with a fresh and a warm bytecode prefix",
    )
    args = parser.parse_args()
    if args.tests < 1 or args.runs < 1:
        parser.error("--tests and --runs must be at least 1")

    tmp = Path(tempfile.mkdtemp(prefix="uh-bench-judge-gate-"))
    os.environ["UH_STATE_DIR"] = str(tmp / "state")  # the harness runs inherit it
    load_before = load()
    samples: dict[str, dict[str, Samples]] = {mode: {} for mode in MODES}
    try:
        root, agents = tmp / "repo", tmp / "agents"
        agent = build_project(root, agents, args.tests)
        configure(root, agents, args.non_regression)
        adopt_orphans()
        for round_no in range(args.runs + 1):
            took: dict[str, dict[str, Any]] = {}
            for mode in order(MODES, round_no):
                took[mode] = harness_run(root, agent, mode, args.non_regression, round_no > 0)
                if round_no:
                    run_cpu = took[mode].pop("run cpu") / 1000
                    for name, value in took[mode].items():
                        extra = run_cpu if name == "run (wall)" else 0.0
                        samples[mode].setdefault(name, Samples()).add(value / 1000, 0.0, extra)
            line = ", ".join(f"{m} tests {took[m]['tests']:.0f} ms" for m in MODES)
            print(f"round {round_no or 'warm-up'}: {line}", file=sys.stderr)
        alone = command_alone(root, tmp, args.runs) if not args.no_context else {}
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    confined, unconfined = samples["bwrap"], samples["none"]
    print(
        f"\nissue 30, figure 3: the gate on a {args.tests}-test suite, confined vs unconfined"
        f"\n{args.runs} counted rounds (+1 warm-up), interleaved; non-regression "
        f"{'on (base run cached)' if args.non_regression else 'off'}; {load_before} before,"
        f" {load()} after\n"
    )
    header = f"{'stage (ledger duration_ms)':26s} {'bwrap ms':>24s} {'none ms':>24s}  ratio"
    print(f"{header}\n{'-' * (len(header) + 36)}")
    shown = [n for n in unconfined if n not in ("gate", "run (wall)")] + ["gate", "run (wall)"]
    for name in shown:
        if name not in confined:
            continue
        ours, base = confined[name].wall, unconfined[name].wall
        ratio = ratio_spread(ours, base) if min(base) > 0 else "-"
        print(f"{name:26s} {spread(ours, 1000, 0):>24s} {spread(base, 1000, 0):>24s}  {ratio}")
    gate = statistics.median(confined["gate"].wall) / statistics.median(unconfined["gate"].wall)
    paired = ratio_spread(confined["gate"].wall, unconfined["gate"].wall)
    print(
        f"\nwhole gate confined / unconfined: {paired}"
        f"  target <= {TARGET}x  {verdict(gate, TARGET)}"
    )
    cpu_b, cpu_n = confined["run (wall)"].children, unconfined["run (wall)"].children
    print(
        f"CPU of the whole run's process tree (agent, gate, every check; ms): bwrap"
        f" {spread(cpu_b)}, none {spread(cpu_n)}: {ratio_spread(cpu_b, cpu_n)}"
    )
    if alone:
        now, fresh, warm = alone["now"], alone["fresh"], alone["warm"]
        print(
            f"\ncontext: the test command alone in a plain checkout:\n"
            f"  as rooms run it (no bytecode written): wall {spread(now.wall, 1000, 0)} ms,"
            f" CPU {spread(now.children, 1000, 0)} ms\n"
            f"  a fresh PYTHONPYCACHEPREFIX (before):  wall {spread(fresh.wall, 1000, 0)} ms,"
            f" CPU {spread(fresh.children, 1000, 0)} ms\n"
            f"  that prefix warm:                      wall {spread(warm.wall, 1000, 0)} ms,"
            f" CPU {spread(warm.children, 1000, 0)} ms\n"
            f"  now / before: {ratio_spread(now.wall, fresh.wall)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
