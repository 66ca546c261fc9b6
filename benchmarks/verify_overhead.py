#!/usr/bin/env python3
"""How much does ``uh-core verify`` cost on top of the commands it runs?

Builds a throw-away git repository with two missions, one with 0 and one with N trivial
acceptance criteria (``check_command: "true"``), and times:

* ``uh-core verify`` on each (median of several runs);
* a shell script running the same N ``sh -c true`` commands, and the empty script (also a
  variant where each command writes to two new log files, as verify does: for context);
* ``uh-core --help`` against a bare ``python -c pass``;
* whether ``textual`` is imported on the headless paths (``--help`` and ``verify``).

Harness cost per criterion = (verify_N - verify_0) / N, compared with the shell's
(shell_N - shell_0) / N: startup is subtracted on both sides. Targets: ratio <= 1.2x
(issue 23); startup <= 250 ms above bare python, without textual. This script only
reports: it never fails because a target is missed (exit 0 unless the measurement itself
could not run).

CPU is reported beside the wall time: the verify process's own CPU per criterion (what
uh adds; its commands' CPU counted apart) and the shell's per command (dash and its
``sh -c true``). When the machine's cores are all busy there is no idle core for uh's work
to overlap the command with, and the wall-clock ratio follows the CPU one.

The machine may be shared: the verify and shell figures are measured in interleaved
rounds (each round runs every variant once, after one warm-up round), so load from others
falls on both sides alike. Besides the ratio of medians, each round's own ratio is
computed and their median reported ("paired ratio"): the steadiest figure on a noisy box.

    python benchmarks/verify_overhead.py [--criteria 200] [--reps 15] [--profile] [--stages]

``--stages`` runs one verify in-process with the per-criterion steps timed (wall and CPU,
median per criterion): where uh's own cost goes.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import yaml

RATIO_TARGET = 1.2  # issue 23
STARTUP_TARGET_MS = 250.0
GIT_ENV = {
    "GIT_AUTHOR_NAME": "uh bench",
    "GIT_AUTHOR_EMAIL": "bench@uh.invalid",
    "GIT_COMMITTER_NAME": "uh bench",
    "GIT_COMMITTER_EMAIL": "bench@uh.invalid",
}


def uh_core() -> str:
    script = Path(sys.executable).with_name("uh-core")
    found = str(script) if script.exists() else shutil.which("uh-core")
    if not found:
        sys.exit("uh-core is not installed (pip install -e .)")
    return found


# ``uh-core`` as its console script runs it, writing its own CPU time (not its children's)
# to the file named by UH_BENCH_CPU when it exits.
VERIFY_WRAPPER = """
import os, resource, sys
from uh_core.cli.main import main
sys.argv[0] = "uh-core"
try:
    code = main()
finally:
    r = resource.getrusage(resource.RUSAGE_SELF)
    with open(os.environ["UH_BENCH_CPU"], "w") as out:
        out.write(repr(r.ru_utime + r.ru_stime))
sys.exit(code)
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_cpu(
    argv: Sequence[str], *, cwd: Path | None = None, check: bool = True, own: Path | None = None
) -> tuple[float, float, float]:
    """(wall, CPU of the whole process tree, CPU of the process itself) of one run, in
    seconds; output discarded. The last is only known with ``own`` (VERIFY_WRAPPER's file)."""
    env = {**os.environ, **GIT_ENV}
    if own is not None:
        env["UH_BENCH_CPU"] = str(own)
    cpu_before = _children_cpu()
    began = time.perf_counter()
    proc = subprocess.run(
        list(argv),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    elapsed = time.perf_counter() - began
    tree_cpu = _children_cpu() - cpu_before
    if check and proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    own_cpu = float(own.read_text()) if own is not None else tree_cpu
    return elapsed, tree_cpu, own_cpu


def run(argv: Sequence[str], *, cwd: Path | None = None, check: bool = True) -> float:
    """Wall time of one run in seconds; output discarded."""
    return run_cpu(argv, cwd=cwd, check=check)[0]


def timed(
    argv: Sequence[str], reps: int, *, cwd: Path | None = None, check: bool = True
) -> tuple[float, float]:
    """(median, min) wall time in seconds after one warm-up run."""
    run(argv, cwd=cwd, check=check)
    samples = [run(argv, cwd=cwd, check=check) for _ in range(reps)]
    return statistics.median(samples), min(samples)


def build_project(root: Path, criteria: int) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([uh_core(), "init", "--root", str(root)], check=True, capture_output=True)
    for count in (0, criteria):
        mission_id = f"bench-{count}"
        mission = {
            "schema_version": "uh.mission.v0",
            "id": mission_id,
            "title": f"{count} trivial criteria",
            "acceptance_criteria": [
                {"id": f"ac-{n:04d}", "description": "trivial", "check_command": "true"}
                for n in range(count)
            ],
        }
        path = root / ".harness" / "missions" / mission_id / "mission.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(mission, sort_keys=False), encoding="utf-8")
        script = root / f"shell-{count}.sh"
        script.write_text("".join("sh -c true\n" for _ in range(count)), encoding="utf-8")
        # The same commands, each writing to two fresh log files as verify does.
        logged = root / f"shell-logged-{count}.sh"
        logged.write_text(
            'd=$(mktemp -d "${TMPDIR:-/tmp}/uh-bench-logs.XXXXXX")\n'
            + "".join(
                f'sh -c true >"$d/ac-{n:04d}.stdout.log" 2>"$d/ac-{n:04d}.stderr.log"\n'
                for n in range(count)
            )
            + 'rm -rf "$d"\n',
            encoding="utf-8",
        )
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "bench"], cwd=root, check=True, env=env)


def textual_imported(argv: Sequence[str], cwd: Path) -> bool:
    """Run ``uh-core`` in-process under ``-X importtime`` and look for textual."""
    code = (
        "import sys\n"
        "from uh_core.cli.main import run\n"
        f"sys.argv = ['uh-core', *{list(argv)!r}]\n"
        "try:\n"
        "    run(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('TEXTUAL' if any(m == 'textual' or m.startswith('textual.') "
        "for m in sys.modules) else 'CLEAN')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    in_importtime = any(
        line.split("|")[-1].strip().split(".")[0] == "textual"
        for line in proc.stderr.splitlines()
        if line.startswith("import time:")
    )
    return in_importtime or "TEXTUAL" in proc.stdout


def profile(root: Path, mission_id: str) -> None:
    """cProfile one in-process verify run (top functions by cumulative time)."""
    import cProfile
    import io
    import pstats
    from contextlib import redirect_stdout

    from uh_core.cli.main import run as cli_run

    profiler = cProfile.Profile()
    with redirect_stdout(io.StringIO()):
        profiler.enable()
        cli_run(["verify", mission_id, "--root", str(root)])
        profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(30)
    print(out.getvalue())


def stages(root: Path, mission_id: str) -> None:
    """One in-process verify with its per-criterion steps wrapped in timers (a few us of
    overhead each): wall and CPU (this thread's) medians per call, and the sum over the run
    divided by the criteria. Steps that overlap the command are marked."""
    import functools
    import io
    from collections import defaultdict
    from collections.abc import Callable
    from contextlib import redirect_stdout
    from typing import Any

    from uh_core.cli.main import run as cli_run
    from uh_core.events import writer
    from uh_core.proc import logged, start
    from uh_core.verify import execute, runner

    timings: dict[str, list[tuple[int, int]]] = defaultdict(list)

    def wrap(owner: Any, name: str, label: str) -> Callable[[], None]:
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed_call(*a: Any, **k: Any) -> Any:
            wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
            try:
                return original(*a, **k)
            finally:
                timings[label].append((time.perf_counter_ns() - wall, time.thread_time_ns() - cpu))

        setattr(owner, name, timed_call)
        return lambda: setattr(owner, name, original)

    steps = [
        (start.Prepared, "start", "start the command (spawn, pidfd)"),
        (start, "spawn", "  spawn (until the child has exec'd)"),
        (runner.Verifier, "_emit_started", "acceptance.started (overlaps the command)"),
        (execute.CheckRunner, "_prepare_next", "prepare the next one (overlaps the command)"),
        (logged.LoggedProcess, "_pump", "wait for the exit (poll)"),
        (logged.LoggedProcess, "_collect", "collect (reap, group check, pipes, result)"),
        (runner.Verifier, "_run_job", "one criterion, start to result"),
        (writer.EventLog, "append_line", "  one event append (flock, write)"),
    ]
    undo = [wrap(owner, name, label) for owner, name, label in steps]
    try:
        with redirect_stdout(io.StringIO()):
            cli_run(["verify", mission_id, "--root", str(root)])
    finally:
        for restore in undo:
            restore()
    count = len(timings["one criterion, start to result"]) or 1
    print(f"{'step':48s} {'calls':>6s} {'wall us':>8s} {'cpu us':>8s} {'cpu us/crit':>11s}")
    print("-" * 85)
    for _, _, label in steps:
        taken = timings.get(label, [])
        if not taken:
            continue
        wall = statistics.median(t[0] for t in taken) / 1000
        cpu = statistics.median(t[1] for t in taken) / 1000
        total = sum(t[1] for t in taken) / 1000 / count
        print(f"{label:48s} {len(taken):6d} {wall:8.1f} {cpu:8.1f} {total:11.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criteria", type=int, default=200, help="trivial ACs (default 200)")
    parser.add_argument("--reps", type=int, default=15, help="timed rounds (default 15)")
    parser.add_argument("--profile", action="store_true", help="also cProfile one verify run")
    parser.add_argument(
        "--stages", action="store_true", help="also time each step of one verify run"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary repository")
    args = parser.parse_args()
    n = args.criteria

    tmp = Path(tempfile.mkdtemp(prefix="uh-bench-"))
    root = tmp / "repo"
    root.mkdir()
    try:
        build_project(root, n)
        cli = uh_core()
        verify = [sys.executable, "-c", VERIFY_WRAPPER, "verify"]
        own_file = tmp / "own-cpu"
        rows: list[tuple[str, float, float]] = []

        def measure(
            label: str, argv: Sequence[str], reps: int = args.reps, check: bool = True
        ) -> tuple[float, float]:
            median, best = timed(argv, reps, cwd=root, check=check)
            rows.append((label, median * 1000, best * 1000))
            return median, best

        # Interleaved rounds: every variant once per round, so drifting load from other
        # processes hits verify and shell alike. bench-0 has nothing gating, so it is
        # "blocked" and exits 1: expected, not checked.
        variants: list[tuple[str, list[str], bool]] = [
            ("uh-core verify (0 ACs)", [*verify, "bench-0", "--root", str(root)], False),
            (f"uh-core verify ({n} ACs)", [*verify, f"bench-{n}", "--root", str(root)], True),
            ("sh shell-0.sh", ["/bin/sh", str(root / "shell-0.sh")], True),
            (
                f"sh shell-{n}.sh ({n} x sh -c true)",
                ["/bin/sh", str(root / f"shell-{n}.sh")],
                True,
            ),
            ("sh shell-logged-0.sh", ["/bin/sh", str(root / "shell-logged-0.sh")], True),
            (
                f"sh shell-logged-{n}.sh (+ 2 new log files each)",
                ["/bin/sh", str(root / f"shell-logged-{n}.sh")],
                True,
            ),
        ]
        samples: list[list[float]] = [[] for _ in variants]
        tree_cpu: list[list[float]] = [[] for _ in variants]
        own_cpu: list[list[float]] = [[] for _ in variants]
        for round_no in range(args.reps + 1):  # round 0 warms up and is not counted
            for index, (_, argv, check) in enumerate(variants):
                is_verify = argv[0] == sys.executable
                elapsed, tree, own = run_cpu(
                    argv, cwd=root, check=check, own=own_file if is_verify else None
                )
                if round_no:
                    samples[index].append(elapsed)
                    tree_cpu[index].append(tree)
                    own_cpu[index].append(own)
        for (label, _, _), taken in zip(variants, samples, strict=True):
            rows.append((label, statistics.median(taken) * 1000, min(taken) * 1000))
        (v0, vn, s0, sn, l0, ln) = (statistics.median(x) for x in samples)
        v0_min, vn_min, s0_min, sn_min = (min(x) for x in samples[:4])
        paired = [
            (vn_r - v0_r) / (sn_r - s0_r)
            for v0_r, vn_r, s0_r, sn_r in zip(*samples[:4], strict=True)
            if sn_r > s0_r
        ]
        paired_ratio = statistics.median(paired) if paired else float("inf")
        py, _ = measure("python -c pass", [sys.executable, "-c", "pass"], max(args.reps, 15))
        hp, _ = measure("uh-core --help", [cli, "--help"], max(args.reps, 15))

        def per_item(values: list[list[float]], with_n: int, without: int) -> float:
            return (
                (statistics.median(values[with_n]) - statistics.median(values[without])) / n * 1000
            )

        own_ms = per_item(own_cpu, 1, 0)  # the verify process itself
        commands_ms = per_item(tree_cpu, 1, 0) - own_ms  # its sh -c true children
        shell_cpu_ms = per_item(tree_cpu, 3, 2)  # dash and its sh -c true
        harness_ms = (vn - v0) / n * 1000
        # On a shared machine the minimums are the steadier estimate; shown beside the medians.
        harness_min_ms = (vn_min - v0_min) / n * 1000
        shell_min_ms = (sn_min - s0_min) / n * 1000
        shell_ms = (sn - s0) / n * 1000
        ratio = harness_ms / shell_ms if shell_ms > 0 else float("inf")
        logged_ms = (ln - l0) / n * 1000
        logged_ratio = harness_ms / logged_ms if logged_ms > 0 else float("inf")
        startup_ms = (hp - py) * 1000
        textual_help = textual_imported(["--help"], root)
        textual_verify = textual_imported(["verify", "bench-0", "--root", str(root)], root)

        print(
            f"\nuh-core verify overhead  ({n} criteria, median of {args.reps} interleaved rounds,"
            f" {os.cpu_count()} cores)"
        )
        print(f"python {sys.version.split()[0]}  {sys.executable}\n")
        print(f"{'measurement':48s} {'median ms':>10s} {'min ms':>10s}")
        print("-" * 70)
        for label, median, best in rows:
            print(f"{label:48s} {median:10.1f} {best:10.1f}")
        print()
        print(f"{'figure':48s} {'value':>10s} {'target':>10s}  verdict")
        print("-" * 80)
        figures = [
            ("harness cost per criterion (ms)", f"{harness_ms:.2f}", "", ""),
            ("shell cost per command (ms)", f"{shell_ms:.2f}", "", ""),
            (
                "ratio harness / shell",
                f"{ratio:.2f}x",
                f"<= {RATIO_TARGET:g}x",
                "MET" if ratio <= RATIO_TARGET else "MISSED",
            ),
            ("  same from minimums: harness (ms)", f"{harness_min_ms:.2f}", "", ""),
            ("  same from minimums: shell (ms)", f"{shell_min_ms:.2f}", "", ""),
            (
                "  same from minimums: ratio",
                f"{harness_min_ms / shell_min_ms:.2f}x" if shell_min_ms > 0 else "inf",
                "(info)",
                "",
            ),
            (
                f"  paired ratio (median of {len(paired)} rounds' own)",
                f"{paired_ratio:.2f}x",
                "(info)",
                "",
            ),
            ("CPU: uh's own per criterion (ms)", f"{own_ms:.2f}", "", ""),
            ("CPU: its command per criterion (ms)", f"{commands_ms:.2f}", "", ""),
            ("CPU: the shell's per command (ms)", f"{shell_cpu_ms:.2f}", "", ""),
            (
                "  CPU ratio (uh's own + command) / shell",
                f"{(own_ms + commands_ms) / shell_cpu_ms:.2f}x" if shell_cpu_ms > 0 else "inf",
                "(info)",
                "",
            ),
            ("shell cost per command with logs (ms)", f"{logged_ms:.2f}", "", ""),
            ("ratio harness / shell with logs", f"{logged_ratio:.2f}x", "(info)", ""),
            (
                "uh-core --help above bare python (ms)",
                f"{startup_ms:.0f}",
                f"<= {STARTUP_TARGET_MS:.0f}",
                "MET" if startup_ms <= STARTUP_TARGET_MS else "MISSED",
            ),
            (
                "textual imported by --help",
                "yes" if textual_help else "no",
                "no",
                "MET" if not textual_help else "MISSED",
            ),
            (
                "textual imported by verify",
                "yes" if textual_verify else "no",
                "no",
                "MET" if not textual_verify else "MISSED",
            ),
        ]
        for label, value, target, verdict in figures:
            print(f"{label:48s} {value:>10s} {target:>10s}  {verdict}")
        if args.profile:
            print(f"\ncProfile of one in-process `uh-core verify bench-{n}`:\n")
            profile(root, f"bench-{n}")
        if args.stages:
            print(f"\nSteps of one in-process `uh-core verify bench-{n}`, per criterion:\n")
            stages(root, f"bench-{n}")
    finally:
        if args.keep:
            print(f"\nkept {root}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
