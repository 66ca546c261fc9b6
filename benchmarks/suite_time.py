#!/usr/bin/env python3
"""The contributor's loop: pytest wall time of the whole suite and of the quick tier
(``-m "not slow"``), each on a fresh clone, as CI starts it (docs/testing.md).

Each run clones this repository's ``HEAD`` into a new folder, installs it editable into a
virtual environment that reuses this interpreter's packages (``--system-site-packages``,
so the install is seconds and nothing is downloaded), and runs ``python -m pytest`` there
with stdin closed, in a session of its own and SIGINT ignored — how a CI script's
background job starts it. The whole suite runs with ``--durations=1`` (its slowest test and
that test's share of the wall time). Prints each run's pytest time (from pytest's own last
line), the wall time, the counts, and the median (min–max) of each tier; the machine's load
before and after. Nothing is judged: the figures are the output. Each run's pytest output is
kept in ``~/.cache/uh-suite-runs/``; a red run names its failed tests and that file.

    python3 benchmarks/suite_time.py [--runs 5] [--quick-only | --whole-only]

The virtual environment lives outside /tmp (``--venv``, default ``~/.cache/uh-bench-venv``):
a check or agent the suite confines with bubblewrap must see its interpreter, and the
confined ``/tmp`` is private.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_LAST = re.compile(r"(?P<counts>\d+ (?:passed|failed|errors?)\b.*?) in (?P<seconds>[0-9.]+)s")
_SLOWEST = re.compile(r"^(?P<seconds>[0-9.]+)s (?:call|setup|teardown)\s+(?P<nodeid>tests/\S+)")


@dataclass
class Run:
    tier: str
    pytest_s: float
    wall_s: float
    counts: str
    code: int
    slowest: tuple[float, str] | None


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def venv(path: Path) -> Path:
    python = path / "bin" / "python"
    if not python.exists():
        subprocess.run(
            [sys.executable, "-m", "venv", "--system-site-packages", str(path)], check=True
        )
    return python


def fresh_clone(into: Path) -> Path:
    clone = into / "uh"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    return clone


LOGS = Path.home() / ".cache" / "uh-suite-runs"


def run_tier(python: Path, clone: Path, tier: str, name: str) -> Run:
    argv = [str(python), "-m", "pytest", "-q", "-p", "no:randomly"]
    argv += ["--durations=1"] if tier == "whole" else ["-m", "not slow"]
    env = {**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTEST_ADDOPTS", None)
    began = time.monotonic()
    done = subprocess.run(
        argv,
        cwd=clone,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        start_new_session=True,
        preexec_fn=_ignore_sigint,
        check=False,
    )
    wall = time.monotonic() - began
    LOGS.mkdir(parents=True, exist_ok=True)
    (LOGS / f"{name}.log").write_text(done.stdout + done.stderr, encoding="utf-8")
    last = [m for m in map(_LAST.search, done.stdout.splitlines()) if m]
    slow = [m for m in map(_SLOWEST.match, done.stdout.splitlines()) if m]
    if not last:
        sys.exit(f"pytest printed no summary (exit {done.returncode}):\n{done.stdout[-3000:]}")
    return Run(
        tier,
        float(last[-1]["seconds"]),
        wall,
        last[-1]["counts"],
        done.returncode,
        (float(slow[0]["seconds"]), slow[0]["nodeid"]) if slow else None,
    )


def machine_probe(python: Path) -> str:
    """How fast this machine is, so figures from two machines can be compared: one core's
    time for a fixed pure-Python loop, and a bare interpreter's start (the floor under every
    ``uh-core`` a test runs). Best of three each."""
    loop = (
        "import time\nt = time.process_time()\ns = 0\n"
        "for i in range(10_000_000): s += i\nprint(time.process_time() - t)"
    )
    spins = [
        float(
            subprocess.run(
                [str(python), "-c", loop], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(3)
    ]
    starts = []
    for _ in range(3):
        before = os.times()
        subprocess.run([str(python), "-c", "pass"], check=True)
        after = os.times()
        starts.append(
            after.children_user
            + after.children_system
            - before.children_user
            - before.children_system
        )
    return f"machine: 10M-add loop {min(spins):.2f} s, python start {min(starts) * 1000:.0f} ms CPU"


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.0f} s ({min(values):.0f}–{max(values):.0f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--quick-only", action="store_true")
    which.add_argument("--whole-only", action="store_true")
    parser.add_argument("--venv", type=Path, default=Path.home() / ".cache" / "uh-bench-venv")
    args = parser.parse_args()
    tiers = ["quick"] if args.quick_only else ["whole"] if args.whole_only else ["whole", "quick"]
    python = venv(args.venv)
    load = os.getloadavg()
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    print(f"HEAD {head}; {os.cpu_count()} cores; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(machine_probe(python), flush=True)
    runs: list[Run] = []
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for n in range(args.runs):
        for tier in tiers:
            folder = Path(tempfile.mkdtemp(prefix="uh-suite-"))
            try:
                clone = fresh_clone(folder)
                subprocess.run(
                    [str(python), "-m", "pip", "install", "-q", "--no-deps", "-e", str(clone)],
                    check=True,
                    capture_output=True,
                )
                run = run_tier(python, clone, tier, f"{stamp}-run{n + 1}-{tier}")
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            runs.append(run)
            slow = ""
            if run.code != 0:
                failed = [
                    line.split(" - ")[0]
                    for line in (LOGS / f"{stamp}-run{n + 1}-{tier}.log").read_text().splitlines()
                    if line.startswith(("FAILED ", "ERROR "))
                ]
                slow += "; " + ", ".join(failed) + f" (log: {LOGS}/{stamp}-run{n + 1}-{tier}.log)"
            if run.slowest:
                seconds, nodeid = run.slowest
                slow += f"; slowest {seconds:.1f} s ({seconds / run.pytest_s:.0%}) {nodeid}"
            print(
                f"run {n + 1} {tier:<5} pytest {run.pytest_s:6.1f} s, wall {run.wall_s:6.1f} s,"
                f" exit {run.code}: {run.counts}{slow}",
                flush=True,
            )
    for tier in tiers:
        mine = [r for r in runs if r.tier == tier]
        green = sum(1 for r in mine if r.code == 0)
        print(
            f"{tier}: pytest {spread([r.pytest_s for r in mine])}, wall"
            f" {spread([r.wall_s for r in mine])}; {green}/{len(mine)} green"
        )
    load = os.getloadavg()
    print(f"load after {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0 if all(r.code == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
