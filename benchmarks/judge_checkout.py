#!/usr/bin/env python3
"""Issue 30, figure 2: the judge's pristine checkout of a 10,000-file repository against
``git worktree add`` of the same commit (target <= 1.2x).

Builds a throw-away git repository of ``--files`` small files in a few hundred folders
(``sandbox_cost.build_repo``: committed and packed, as a real repository is), then, in
interleaved rounds (the order reversed every other round; round 0 warms the page cache and
is not counted), writes the same commit into a fresh folder each time:

- ``git worktree add --detach <new folder> HEAD``: the baseline;
- ``uh_core.judge.checkout.write_tree(git_dir, commit, <new folder>)``: what ``open_room``
  does for every gate stage (``git read-tree --reset -u`` into a temporary index, through
  the engine's git: no global or system configuration, no hooks);
- with ``--direct``, for context, the same ``read-tree`` run directly (``git --git-dir …
  --work-tree …`` with ``GIT_INDEX_FILE``), without the engine's wrapper.

Removal is outside the timed region. CPU is the git processes' (``getrusage`` of reaped
children) beside the wall clock. This script only reports: it never fails because a target
is missed.

    python benchmarks/judge_checkout.py [--files 10000] [--runs 3] [--direct]

A 10,000-file checkout takes seconds on a small VM (about 9 s on the 2-core one here).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from judge_common import Samples, load, order, ratio_spread, spread, timer, verdict
from sandbox_cost import GIT_ENV, build_repo, git

from uh_core.judge.checkout import write_tree
from uh_core.layout import STATE_ENV
from uh_core.sandbox.worktree import remove_tree

TARGET = 1.2  # issue 30


def count_files(folder: Path) -> int:
    return sum(len(files) for _root, _dirs, files in os.walk(folder))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000, help="files (default 10000)")
    parser.add_argument("--runs", type=int, default=3, help="counted rounds (default 3)")
    parser.add_argument(
        "--direct", action="store_true", help="also time the read-tree without uh's wrapper"
    )
    args = parser.parse_args()
    if args.files < 1 or args.runs < 1:
        parser.error("--files and --runs must be at least 1")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = Path(tempfile.mkdtemp(prefix="uh-bench-judge-checkout-")).resolve()
    load_before = load()
    samples: dict[str, Samples] = {}
    try:
        os.environ[STATE_ENV] = str(tmp / "state")
        root = tmp / "repo"
        build_repo(root, args.files)
        git_dir = root / ".git"
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        listed = subprocess.run(
            ["git", "ls-tree", "-r", "--name-only", commit],
            cwd=root, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        expected = len(listed.splitlines())
        made = iter(range(1_000_000))

        def worktree_add() -> Path:
            dest = tmp / f"wt-{next(made)}"
            git(root, "worktree", "add", "-q", "--detach", str(dest), commit)
            return dest

        def pristine() -> Path:
            dest = tmp / f"judge-{next(made)}" / "tree"
            write_tree(git_dir, commit, dest)
            return dest

        def read_tree_direct() -> Path:
            dest = tmp / f"direct-{next(made)}" / "tree"
            dest.mkdir(parents=True)
            index = dest.parent / "index"
            argv = ["git", f"--git-dir={git_dir}", f"--work-tree={dest}", "read-tree"]
            subprocess.run(
                [*argv, "--reset", "-u", f"{commit}^{{tree}}"],
                cwd=dest,
                env={**os.environ, **GIT_ENV, "GIT_INDEX_FILE": str(index)},
                check=True,
            )
            index.unlink()
            return dest

        def remove(name: str, dest: Path) -> None:
            if name == "git worktree add (baseline)":
                git(root, "worktree", "remove", "--force", str(dest))
            else:
                remove_tree(dest.parent)

        variants: dict[str, Callable[[], Path]] = {
            "git worktree add (baseline)": worktree_add,
            "write_tree (the judge's checkout)": pristine,
        }
        if args.direct:
            variants["git read-tree -u direct (context)"] = read_tree_direct
        for round_no in range(args.runs + 1):
            for name in order(list(variants), round_no):
                with timer() as clock:
                    dest = variants[name]()
                found = count_files(dest) - (1 if name.startswith("git worktree") else 0)
                if found != expected:  # a worktree holds a .git file besides the tree
                    sys.exit(f"{name}: {found} files written, {expected} expected")
                remove(name, dest)
                if round_no:
                    samples.setdefault(name, Samples()).add(clock.wall, clock.own, clock.children)
                print(f"round {round_no or 'warm-up'}: {name} {clock.wall * 1000:.0f} ms",
                      file=sys.stderr)  # fmt: skip
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        f"\nissue 30, figure 2: a pristine checkout of {args.files} files vs git worktree add"
        f"\n{args.runs} counted rounds (+1 warm-up), interleaved, a fresh folder each time;"
        f" {load_before} before, {load()} after\n"
    )
    header = f"{'variant':36s} {'wall ms: median (min–max)':>28s} {'git CPU ms':>26s}"
    print(f"{header}\n{'-' * len(header)}")
    for name, taken in samples.items():
        print(f"{name:36s} {spread(taken.wall):>28s} {spread(taken.children):>26s}")
    base = samples["git worktree add (baseline)"]
    ours = samples["write_tree (the judge's checkout)"]
    figure = statistics.median(ours.wall) / statistics.median(base.wall)
    print(
        f"\nwrite_tree / git worktree add: {ratio_spread(ours.wall, base.wall)}"
        f"  target <= {TARGET}x  {verdict(figure, TARGET)}"
    )
    print(f"  CPU (git's): {ratio_spread(ours.children, base.children)}")
    direct = samples.get("git read-tree -u direct (context)")
    if direct is not None:
        context = ratio_spread(ours.wall, direct.wall)
        print(f"context: write_tree / the same read-tree direct: {context}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
