#!/usr/bin/env python3
"""Issue 30, figure 1: verify of N trivial criteria in the judge's confined room against
the same verify in an unconfined room (target <= 1.3x).

Builds a throw-away git repository with one mission of ``--criteria`` criteria
(``check_command: "true"``), committed, and runs ``verify_mission`` in-process, as the
gate's verify stage does (``uh_core/judge/stages/verify.py``), in interleaved rounds (each
round runs every variant once, the order reversed every other round; round 0 warms up and
is not counted):

- ``bwrap``: ``open_room(..., resolve_mode("bwrap"))``; options from the room (its
  launcher: one bubblewrap session whose zygote starts every command, its environment);
- ``none``: the same with ``resolve_mode("none")`` (plain processes, the room's checkout,
  its environment);
- ``plain``: today's ``uh-core verify`` without a room (``VerifyOptions()``, checks in the
  main checkout, this process's working directory there as the CLI sets it): context.

For each room three parts are timed apart: opening it (the pristine checkout: the ``with``
entry, during which the bubblewrap session starts beside the checkout), the verify
(``room.launcher()`` — the session already started — plus ``verify_mission``), and closing it
(the session's end, the leftovers' sweep, removal).
The figure is the verify's ratio; the whole stage's is shown beside it. CPU (``getrusage``)
is this process's own and its reaped descendants' over the whole room: this process is a
child subreaper, so bubblewrap's namespace init comes back to it when the session closes and
the CPU of the zygote and of every confined command is counted (``judge_common``).

A later attempt's verify of the same sandbox first reads the previous verification.yaml
(``verify/flaky.py``); each room verify here is a first attempt's (the file is removed
before), and that read is timed apart.

This script only reports: it never fails because a target is missed.

    python benchmarks/judge_confined_verify.py [--criteria 200] [--runs 3] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import os
import pstats
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import yaml
from judge_common import (
    Samples,
    adopt_orphans,
    cpu,
    load,
    order,
    ratio_spread,
    reap_orphans,
    spread,
    timed,
    timer,
    verdict,
)
from sandbox_cost import git

from uh_core.init import init_project
from uh_core.isolation.bwrap import Resolved, bwrap_available, resolve_mode
from uh_core.judge.room import open_room
from uh_core.layout import STATE_ENV, Layout
from uh_core.missions import load_mission
from uh_core.models.mission import Mission
from uh_core.verify.flaky import previous_result
from uh_core.verify.runner import VerifyOptions, verify_mission

TARGET = 1.3  # issue 30
MISSION = "bench"


def build(root: Path, criteria: int) -> str:
    """The repository with the mission, committed; its commit id."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "gc.auto", "0")
    init_project(Layout(root))
    mission = {
        "schema_version": "uh.mission.v0",
        "id": MISSION,
        "title": f"{criteria} trivial criteria",
        "acceptance_criteria": [
            {"id": f"ac-{n:04d}", "description": "trivial", "check_command": "true"}
            for n in range(criteria)
        ],
    }
    path = root / ".harness" / "missions" / MISSION / "mission.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(mission, sort_keys=False), encoding="utf-8")
    (root / "README.md").write_text("bench\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bench")
    done = git_out(root, "rev-parse", "HEAD")
    return done


def git_out(root: Path, *args: str) -> str:
    import subprocess

    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()


def check_passed(status: str, label: str) -> None:
    if status != "passed":
        sys.exit(f"{label}: verify ended {status}, not passed: the measurement is void")


class Bench:
    def __init__(self, layout: Layout, mission: Mission, commit: str) -> None:
        self.layout, self.mission, self.commit = layout, mission, commit
        self.parts: dict[str, Samples] = {}

    def record(self, name: str, wall: float, own: float = 0.0, children: float = 0.0) -> None:
        self.parts.setdefault(name, Samples()).add(wall, own, children)

    def plain(self, counted: bool) -> None:
        os.chdir(self.layout.root)  # as `uh-core verify` does: commands start by posix_spawn
        with timer() as clock:
            result = verify_mission(self.layout, self.mission, VerifyOptions())
        check_passed(result.status, "plain")
        if counted:
            self.record("plain verify", clock.wall, clock.own, clock.children)

    def room(self, isolation: Resolved, counted: bool, verify: Callable[..., object]) -> None:
        name = isolation.mode
        os.chdir(self.layout.state_dir)  # as in the gate: not the room's checkout
        git_dir = self.layout.root / ".git"
        # A first attempt's verify: no earlier verification.yaml to compare verdicts with
        # (its read is timed apart, in main).
        self.layout.verification_file(MISSION).unlink(missing_ok=True)
        own, kids = cpu()
        with timer() as whole:
            manager = open_room(self.layout, git_dir, self.commit, isolation, label="bench")
            with timer() as opening:
                room = manager.__enter__()
            try:
                with timer() as running:
                    with timer() as starting:
                        launcher = room.launcher()  # confined: the bubblewrap session starts
                    options = VerifyOptions(
                        workdir=room.checkout,
                        judged_tree=self.commit,
                        launcher=launcher,
                        base_env=room.env,
                        network_launcher=lambda: room.launcher(network=True),
                        isolation=room.note(),
                    )
                    result = verify(self.layout, self.mission, options)
            finally:
                with timer() as closing:
                    manager.__exit__(None, None, None)
        reap_orphans()  # bubblewrap's namespace init, and the CPU of all it ran
        own_after, kids_after = cpu()
        check_passed(getattr(result, "status", "passed"), name)
        if room.survivors:
            sys.exit(f"{name}: the room reports survivors: {room.survivors[:3]}")
        if counted:
            self.record(f"{name} open (checkout)", opening.wall)
            self.record(f"{name} verify", running.wall, running.own)
            if isolation.mode == "bwrap":
                self.record(f"{name}   of which session start", starting.wall)
            self.record(f"{name} close", closing.wall)
            self.record(f"{name} whole stage", whole.wall, own_after - own, kids_after - kids)


def profile_one(bench: Bench, isolation: Resolved) -> str:
    profiler = cProfile.Profile()

    def verify(layout: Layout, mission: Mission, options: VerifyOptions) -> object:
        profiler.enable()
        try:
            return verify_mission(layout, mission, options)
        finally:
            profiler.disable()

    bench.room(isolation, False, verify)
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(18)
    return out.getvalue()


def steps(bench: Bench, isolation: Resolved) -> str:
    """One confined verify with the session's per-command steps timed (wall, median per
    call and sum per criterion), and the zygote's own CPU per command (its /proc stat)."""
    from uh_core.judge import session

    taken: dict[str, list[int]] = {}
    zygote: list[tuple[float, float]] = []
    tick = os.sysconf("SC_CLK_TCK")

    def zygote_cpu(pid: int) -> tuple[float, float]:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return int(fields[11]) / tick, int(fields[12]) / tick

    def wrap(name: str, label: str) -> Callable[[], None]:
        original = getattr(session.ConfinedSession, name)

        @functools.wraps(original)
        def timed_call(self: session.ConfinedSession, *a: object, **k: object) -> object:
            if not zygote:
                zygote.append(zygote_cpu(self._zygote_host_pid))
                zygote.append((0.0, 0.0))
            began = time.perf_counter_ns()
            try:
                return original(self, *a, **k)
            finally:
                taken.setdefault(label, []).append(time.perf_counter_ns() - began)
                if name == "_exit_status":
                    zygote[1] = zygote_cpu(self._zygote_host_pid)

        setattr(session.ConfinedSession, name, timed_call)
        return lambda: setattr(session.ConfinedSession, name, original)

    undo = [
        wrap("spawn", "spawn: request, zygote starts it, answer, host pid"),
        wrap("_host_pid", "  host pid lookup (/proc)"),
        wrap("_exit_status", "exit status: wait for the zygote's report"),
    ]
    try:
        bench.room(isolation, False, verify_mission)
    finally:
        for restore in undo:
            restore()
    n = len(taken.get("spawn: request, zygote starts it, answer, host pid", [])) or 1
    lines = [f"{'step':52s} {'calls':>6s} {'median us':>10s} {'sum ms/crit':>12s}"]
    for label, values in taken.items():
        med = statistics.median(values) / 1000
        lines.append(f"{label:52s} {len(values):6d} {med:10.0f} {sum(values) / 1e6 / n:12.3f}")
    (user0, sys0), (user1, sys1) = zygote
    lines.append(
        f"zygote's own CPU per command: user {(user1 - user0) / n * 1000:.3f} ms,"
        f" system {(sys1 - sys0) / n * 1000:.3f} ms (clock ticks: coarse)"
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criteria", type=int, default=200, help="trivial ACs (default 200)")
    parser.add_argument("--runs", type=int, default=3, help="counted rounds (default 3)")
    parser.add_argument(
        "--profile", action="store_true", help="also cProfile one verify per room (tottime)"
    )
    parser.add_argument("--steps", action="store_true", help="also time a confined command's steps")
    args = parser.parse_args()
    if args.criteria < 1 or args.runs < 1:
        parser.error("--criteria and --runs must be at least 1")
    ok, why = bwrap_available()
    if not ok:
        sys.exit(f"bubblewrap cannot run here ({why}): nothing to compare")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = Path(tempfile.mkdtemp(prefix="uh-bench-judge-verify-")).resolve()
    here = os.getcwd()
    load_before = load()
    try:
        os.environ[STATE_ENV] = str(tmp / "state")
        layout = Layout(tmp / "repo")
        commit = build(layout.root, args.criteria)
        layout.state_dir.mkdir(parents=True, exist_ok=True)
        mission = load_mission(layout, MISSION).mission
        bench = Bench(layout, mission, commit)
        adopt_orphans()
        confined, unconfined = resolve_mode("bwrap"), resolve_mode("none")
        variants: dict[str, Callable[[bool], None]] = {
            "bwrap": lambda counted: bench.room(confined, counted, verify_mission),
            "none": lambda counted: bench.room(unconfined, counted, verify_mission),
            "plain": bench.plain,
        }
        for round_no in range(args.runs + 1):
            for name in order(list(variants), round_no):
                variants[name](round_no > 0)
        previous = Samples()
        for _ in range(args.runs):  # what a later attempt's verify reads first (flaky.py)
            previous.add(timed(lambda: previous_result(layout.verification_file(MISSION))).wall)
        profiles = (
            [(m, profile_one(bench, r)) for m, r in (("bwrap", confined), ("none", unconfined))]
            if args.profile
            else []
        )
        step_table = steps(bench, confined) if args.steps else ""
    finally:
        os.chdir(here)
        shutil.rmtree(tmp, ignore_errors=True)

    parts = bench.parts
    n = args.criteria
    print(
        f"\nissue 30, figure 1: verify of {n} trivial criteria, confined vs unconfined room"
        f"\n{args.runs} counted rounds (+1 warm-up), interleaved; {load_before} before,"
        f" {load()} after\n"
    )
    print(f"{'part':34s} {'wall ms: median (min–max)':>32s} {'per criterion ms':>17s}")
    print("-" * 86)
    for name, samples in parts.items():
        per = spread(samples.wall, 1000 / n, 2) if "verify" in name else ""
        print(f"{name:34s} {spread(samples.wall):>32s} {per:>17s}")
    print(f"\n{'CPU (getrusage), ms':34s} {'own':>24s} {'children':>24s}")
    print("-" * 86)
    for name in ("bwrap verify", "none verify", "bwrap whole stage", "none whole stage"):
        print(f"{name:34s} {spread(parts[name].own):>24s} {spread(parts[name].children):>24s}")
    plain = parts["plain verify"]
    print(f"{'plain verify':34s} {spread(plain.own):>24s} {spread(plain.children):>24s}")

    bw, no = parts["bwrap verify"].wall, parts["none verify"].wall
    figure = statistics.median(bw) / statistics.median(no)
    print(
        f"\nverify confined / unconfined: {ratio_spread(bw, no)}"
        f"  target <= {TARGET}x  {verdict(figure, TARGET)}"
    )
    whole_b, whole_n = parts["bwrap whole stage"].wall, parts["none whole stage"].wall
    whole = ratio_spread(whole_b, whole_n)
    print(f"whole stage (open + verify + close) confined / unconfined: {whole}")
    print(f"context: unconfined room / plain verify: {ratio_spread(no, plain.wall)}")
    print(f"context: confined room / plain verify:   {ratio_spread(bw, plain.wall)}")
    print(
        f"context: a later attempt's verify first reads the previous verification.yaml"
        f" (verify/flaky.py previous_result): {spread(previous.wall)} ms, not in the figures"
    )
    if step_table:
        print(f"\nSteps of one confined verify, per criterion:\n{step_table}")
    for mode, text in profiles:
        print(f"\ncProfile of one verify in the {mode} room (tottime):\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
