#!/usr/bin/env python3
"""What a sandbox and a guarded attempt cost, against plain git and an unconfined agent.

Builds a throw-away git repository of ``--files`` small files in a few hundred folders with
an initialised ``.harness/`` (``UH_STATE_DIR`` points at a temporary folder beside it), then
measures in interleaved rounds (each round runs every variant once, in an order that
alternates from round to round; for 2., round 0 warms up and is not counted):

1. creating a sandbox (``uh_core.sandbox.worktree.create_sandbox``: a repository borrowing
   the operator's objects, base commit checked out) against plain ``git worktree add
   --detach``; removal is outside the timed region. Target <= 1.2x.
2. one attempt of a trivial agent (``/bin/sh -c true``, through ``uh_core.proc.run_logged``)
   unconfined, and wrapped by ``uh_core.isolation.wrap_argv`` (bubblewrap); the tamper
   snapshot (``snapshot_repo`` before and after, then ``compare``); and ``AgentGuard``
   ``start()``/``finish()`` around the agent as the engine uses it, in modes none and bwrap.
   Overhead per attempt = (isolated - unconfined) + (two snapshots + compare).
   Target <= 150 ms. The agent alone runs ``AGENT_REPS`` times per round (it is short).

This script only reports: it never fails because a target is missed.

    python benchmarks/sandbox_cost.py [--files 10000] [--rounds 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from uh_core.init import init_project
from uh_core.isolation import IsolationMode, bwrap_available, resolve_mode, wrap_argv
from uh_core.layout import STATE_ENV, Layout
from uh_core.proc import run_logged
from uh_core.sandbox.worktree import create_sandbox, discard_sandbox, entry_path
from uh_core.security.guard import AgentGuard
from uh_core.security.tamper import compare, snapshot_repo

CREATE_TARGET = 1.2
OVERHEAD_TARGET_MS = 150.0
FILES_PER_FOLDER = 40
AGENT_REPS = 5
AGENT = ["/bin/sh", "-c", "true"]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "uh bench",
    "GIT_AUTHOR_EMAIL": "bench@uh.invalid",
    "GIT_COMMITTER_NAME": "uh bench",
    "GIT_COMMITTER_EMAIL": "bench@uh.invalid",
}


def git(root: Path, *args: str) -> None:
    done = subprocess.run(
        ["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, capture_output=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"git {' '.join(args)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")


def build_repo(root: Path, files: int) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    # An operator's identity (create_sandbox copies it) and no auto-gc mid-measurement.
    for key, value in (("user.name", "uh bench"), ("user.email", "bench@uh.invalid")):
        git(root, "config", key, value)
    git(root, "config", "gc.auto", "0")
    for i in range(files):
        folder = root / "src" / f"pkg{i // FILES_PER_FOLDER:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(f"VALUE = {i}\n", encoding="utf-8")
    init_project(Layout(root))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "bench")
    git(root, "gc", "-q")  # packed, as a real repository is


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def timed(action: Callable[[], object]) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def creation(tmp: Path, layout: Layout, rounds: int) -> tuple[list[float], list[float]]:
    """Seconds per creation: (git worktree add, create_sandbox); removal is not timed. No
    warm-up round: the build left the pack in the page cache, and a 10,000-file checkout
    takes seconds on a small VM (which is also why --rounds defaults to 5, not 7)."""
    samples: dict[str, list[float]] = {"plain": [], "ours": []}
    for round_no in range(rounds):
        for kind in ("plain", "ours") if round_no % 2 == 0 else ("ours", "plain"):
            began = time.perf_counter()
            if kind == "plain":
                target = tmp / f"wt-{round_no}"
                git(layout.root, "worktree", "add", "-q", "--detach", str(target), "HEAD")
                took = time.perf_counter() - began
                git(layout.root, "worktree", "remove", "--force", str(target))
            else:
                entry = create_sandbox(layout, "m", "bench")
                took = time.perf_counter() - began
                discard_sandbox(layout, entry.id)
            samples[kind].append(took)
    return samples["plain"], samples["ours"]


def attempts(tmp: Path, layout: Layout, rounds: int, bwrap: bool) -> dict[str, list[float]]:
    entry = create_sandbox(layout, "m", "attempt")
    sandbox, outbox = entry_path(layout, entry), layout.sandbox_evidence(entry.id) / "agent"
    outbox.mkdir(parents=True, exist_ok=True)
    logs = tmp / "logs"
    logs.mkdir()
    bad: list[str] = []

    def agent(argv: list[str]) -> None:
        done = run_logged(
            argv, cwd=sandbox, stdout_log=logs / "out.log", stderr_log=logs / "err.log"
        )
        if done.exit_code != 0:
            bad.append(f"{argv[0]} exited {done.exit_code}: {done.stderr_snippet!r}")

    def isolated() -> None:
        agent(wrap_argv(AGENT, writable=[sandbox, outbox], readable=[layout.root], cwd=sandbox))

    def tamper() -> None:
        before = snapshot_repo(layout.root)
        changes = compare(before, snapshot_repo(layout.root))
        if changes:
            bad.append(f"tamper: {len(changes)} changes, first {changes[0].describe()}")

    def guarded(mode: IsolationMode) -> Callable[[], None]:
        def run() -> None:
            guard = AgentGuard(layout, resolve_mode(mode), own={entry.id})
            guard.start()
            argv = AGENT
            if guard.confined:
                writable = [Path(p) for p in guard.writable(sandbox, outbox, [])]
                readable = [Path(p) for p in guard.readable()]
                argv = wrap_argv(AGENT, writable=writable, readable=readable, cwd=sandbox)
            agent(argv)
            report = guard.finish()
            if report.tampered or report.survivors:
                bad.append(f"guard {mode}: {report.tampered[:3]} {report.survivors[:3]}")

        return run

    variants: dict[str, Callable[[], None]] = {"unconfined": lambda: agent(AGENT)}
    if bwrap:
        variants["isolated"] = isolated
    variants["tamper"] = tamper
    variants["guard none"] = guarded("none")
    if bwrap:
        variants["guard bwrap"] = guarded("bwrap")
    short = [name for name in ("unconfined", "isolated") if name in variants]
    samples: dict[str, list[float]] = {name: [] for name in variants}
    try:
        for round_no in range(rounds + 1):
            order = list(variants) if round_no % 2 == 0 else list(reversed(variants))
            for name in order:
                reps = AGENT_REPS if name in short else 1
                for _ in range(reps):
                    took = timed(variants[name])
                    if round_no:
                        samples[name].append(took)
    finally:
        discard_sandbox(layout, entry.id)
    for problem in dict.fromkeys(bad):
        print(f"WARNING: {problem}", file=sys.stderr)
    return samples


def verdict(value: float, target: float) -> str:
    return "MET" if value <= target else "MISSED"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000, help="files (default 10000)")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # clean up as on Ctrl-C
    tmp = Path(tempfile.mkdtemp(prefix="uh-bench-sandbox-")).resolve()
    try:
        os.environ[STATE_ENV] = str(tmp / "state")
        layout = Layout(tmp / "repo")
        build_repo(layout.root, args.files)
        plain, ours = creation(tmp, layout, args.rounds)
        ok, why = bwrap_available()
        found = attempts(tmp, layout, args.rounds, ok)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = {name: ms(taken) for name, taken in found.items()}
    ratio = ms(ours) / ms(plain)
    paired = statistics.median(o / p for p, o in zip(plain, ours, strict=True))
    isolation = med["isolated"] - med["unconfined"] if ok else 0.0
    overhead = isolation + med["tamper"]
    figures = {
        "files": args.files,
        "rounds": args.rounds,
        "git_worktree_add_ms": round(ms(plain), 2),
        "create_sandbox_ms": round(ms(ours), 2),
        "create_ratio": round(ratio, 3),
        "create_paired_ratio": round(paired, 3),
        "attempt_ms": {name: round(value, 2) for name, value in med.items()},
        "bwrap": ok,
        "bwrap_reason": why,
        "isolation_ms": round(isolation, 2) if ok else None,
        "overhead_ms": round(overhead, 2),
        "targets": {"create_ratio": CREATE_TARGET, "overhead_ms": OVERHEAD_TARGET_MS},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"\nsandbox cost ({args.files} files, median of {args.rounds} interleaved rounds)\n")
    print(f"{'sandbox creation':46s} {'median ms':>10s}\n" + "-" * 57)
    print(f"{'git worktree add --detach (baseline)':46s} {ms(plain):10.1f}")
    print(f"{'create_sandbox':46s} {ms(ours):10.1f}")
    print(f"ratio: {ratio:.2f}x (target <= {CREATE_TARGET}x) {verdict(ratio, CREATE_TARGET)}")
    print(f"paired ratio (median of the rounds' own): {paired:.2f}x\n")
    labels = {
        "unconfined": "trivial agent unconfined (baseline)",
        "isolated": "trivial agent under wrap_argv (bwrap)",
        "tamper": "snapshot_repo x2 + compare",
        "guard none": "AgentGuard(none) start + agent + finish",
        "guard bwrap": "AgentGuard(bwrap) start + agent + finish",
    }
    print(f"{'per attempt':46s} {'median ms':>10s} {'vs baseline':>12s}\n" + "-" * 70)
    for name, value in med.items():
        print(f"{labels[name]:46s} {value:10.1f} {value / med['unconfined']:11.1f}x")
    if not ok:
        print(f"trivial agent under wrap_argv: skipped, bubblewrap cannot run here ({why})")
    print(
        f"\nisolation + tamper overhead per attempt = {overhead:.1f} ms"
        f" (target <= {OVERHEAD_TARGET_MS:.0f} ms) {verdict(overhead, OVERHEAD_TARGET_MS)}"
        f"\n  isolation {isolation:.1f} ms{'' if ok else ' (skipped)'},"
        f" tamper {med['tamper']:.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
