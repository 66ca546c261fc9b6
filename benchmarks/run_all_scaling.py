"""How run-all scales, and what a sandbox costs over plain ``git worktree add``.

    python benchmarks/run_all_scaling.py [--sleep 2] [--files 10000] [--reps 3]

1. run-all wall time with 1, 2, 4 and 8 ``script`` runtimes that each sleep ``--sleep``
   seconds, parallel and ``--serial``; ratio of N parallel runtimes to one runtime.
   Target: 4 runtimes in parallel <= 1.3x one runtime.
2. Creating a sandbox (``uh_core.sandbox.worktree.create_sandbox``: rev-parse, locked index,
   ``git worktree add``) against plain ``git worktree add --detach`` on a repository of
   ``--files`` files, median of ``--reps``. Target <= 1.2x.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@uh.invalid", "-c", "gc.auto=0"]


def sh(args: list[str], cwd: Path) -> None:
    subprocess.run(args, cwd=cwd, check=True, capture_output=True)


def make_repo(root: Path, files: int) -> None:
    root.mkdir(parents=True)
    sh(["git", "init", "-q", "-b", "main"], root)
    for i in range(files):
        folder = root / "src" / f"pkg{i // 500:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"mod{i:05d}.py").write_text(f"VALUE = {i}\n")
    sh([sys.executable, "-m", "uh_core", "init", "--root", str(root)], root)
    for adapter in (root / ".harness/adapters").glob("*.yaml"):
        adapter.unlink()
    sh([*GIT, "add", "-A"], root)
    sh([*GIT, "commit", "-q", "-m", "init"], root)
    # Pack it, as a real repository is: 10,000 loose objects would make git start an
    # auto-gc in the middle of the measurements and time that instead.
    sh(["git", "gc", "-q"], root)


def run_all_seconds(root: Path, runtimes: int, sleep: float, serial: bool) -> float:
    names = [f"sleeper{i}" for i in range(runtimes)]
    for name in names:
        (root / ".harness/adapters" / f"{name}.yaml").write_text(
            f"schema_version: uh.adapter.v0\nid: {name}\nruntime_kind: script\n"
            f"status: active\nconfig:\n  script: sleep {sleep}\n"
        )
    mission = root / ".harness/missions/m/mission.yaml"
    mission.parent.mkdir(parents=True, exist_ok=True)
    mission.write_text("id: m\n")
    cmd = [
        sys.executable,
        "-m",
        "uh_core",
        "mission",
        "run-all",
        "m",
        "--root",
        str(root),
        "--runtimes",
        ",".join(names),
    ] + (["--serial"] if serial else [])
    started = time.perf_counter()
    subprocess.run(cmd, cwd=root, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    for entry in list((root / ".harness/sandboxes").glob("sbx-*")):
        sh(["git", "worktree", "remove", "--force", str(entry / "worktree")], root)
        shutil.rmtree(entry, ignore_errors=True)
    (root / ".harness/sandboxes/index.yaml").write_text(
        "schema_version: uh.sandboxes-index.v0\nsandboxes: []\n"
    )
    return elapsed


def sandbox_seconds(root: Path, reps: int) -> tuple[float, float]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from uh_core.layout import Layout
    from uh_core.sandbox.worktree import create_sandbox, discard_sandbox

    plain, ours = [], []
    for rep in range(reps + 1):  # the first round warms the page cache and is not counted
        target = root.parent / f"plain-{rep}"
        started = time.perf_counter()
        sh(["git", "worktree", "add", "--quiet", "--detach", str(target), "HEAD"], root)
        plain.append(time.perf_counter() - started)
        sh(["git", "worktree", "remove", "--force", str(target)], root)
        started = time.perf_counter()
        entry = create_sandbox(Layout(root), "m", "bench")
        ours.append(time.perf_counter() - started)
        discard_sandbox(Layout(root), entry.id)
    return statistics.median(plain[1:]), statistics.median(ours[1:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sleep", type=float, default=2.0)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "small"
        make_repo(small, 20)
        print(f"run-all: script runtimes sleeping {args.sleep:g} s each (wall seconds)")
        print(f"{'runtimes':>8}  {'parallel':>9}  {'serial':>9}  {'parallel / one':>15}")
        one = None
        ratios = {}
        for count in (1, 2, 4, 8):
            parallel = run_all_seconds(small, count, args.sleep, serial=False)
            serial = run_all_seconds(small, count, args.sleep, serial=True)
            one = one if one is not None else parallel
            ratios[count] = parallel / one
            print(f"{count:>8}  {parallel:>9.2f}  {serial:>9.2f}  {ratios[count]:>14.2f}x")
        verdict = "MET" if ratios[4] <= 1.3 else "MISSED"
        print(f"4 runtimes in parallel vs one: {ratios[4]:.2f}x (target <= 1.3x) {verdict}\n")

        big = Path(tmp) / "big" / "repo"
        make_repo(big, args.files)
        plain, ours = sandbox_seconds(big, args.reps)
        ratio = ours / plain
        verdict = "MET" if ratio <= 1.2 else "MISSED"
        print(f"sandbox creation on {args.files} files (median of {args.reps}):")
        print(f"  git worktree add   {plain * 1000:8.1f} ms")
        print(f"  create_sandbox     {ours * 1000:8.1f} ms")
        print(f"  ratio              {ratio:8.2f}x (target <= 1.2x) {verdict}")


if __name__ == "__main__":
    main()
