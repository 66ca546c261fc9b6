#!/usr/bin/env python3
"""The consensus patch's cost (issue 34, uh_core/runall/consensus.py): six runtimes whose
diffs each touch 200 files.

A repository of 200 files of 60 lines. Each of six "runtimes" edits every file with git's
own diff: three hunks per file that all six make (one of them with other spacing in half
the runtimes), and one hunk of its own; their patches are written as ``diff.patch`` files
the way run-all keeps them. Measured, median of rounds:

- **baseline**: what run-all did with the six diffs before the consensus: hash each whole
  patch (the diff groups);
- **consensus**: read each patch hunk by hunk, tally, choose by a majority and render the
  consensus patch (what ``Consensus.duration_ms`` counts; applying it and verifying the
  sandbox are the same work as for any runtime's result, not counted here).

Printed: sizes, both medians, their ratio, and the target (consensus at most 1 s).

    python3 benchmarks/consensus.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from uh_core.runall.consensus import majority
from uh_core.runall.hunks import hunks_of, render, tally

FILES, LINES, RUNTIMES = 200, 60, 6


def git(root: Path, *args: str) -> str:
    who = {"NAME": "bench", "EMAIL": "bench@uh.invalid"}
    env = {
        **os.environ,
        **{f"GIT_{r}_{k}": v for r in ("AUTHOR", "COMMITTER") for k, v in who.items()},
    }
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def make_patches(base: Path) -> list[Path]:
    root = base / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for f in range(FILES):
        (root / f"mod{f:03}.py").write_text("".join(f"v{n} = {n}\n" for n in range(LINES)))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    patches = []
    for r in range(RUNTIMES):
        for f in range(FILES):
            lines = [f"v{n} = {n}\n" for n in range(LINES)]
            lines[5] = "v5 = 'shared'\n"
            lines[20] = "v20  =  'shared'\n" if r % 2 else "v20 = 'shared'\n"  # spacing
            lines[35] = "v35 = 'shared'\n"
            lines[50] = f"v50 = 'runtime {r}'\n"  # its own
            (root / f"mod{f:03}.py").write_text("".join(lines))
        patch = base / f"r{r}.patch"
        patch.write_text(git(root, "diff"))
        patches.append(patch)
        git(root, "checkout", "-q", "--", ".")
    return patches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="uh-bench-consensus-") as scratch:
        patches = make_patches(Path(scratch))
        size = sum(p.stat().st_size for p in patches)
        print(f"{RUNTIMES} runtimes x {FILES} files: {size / 1e6:.1f} MB of diffs")
        base_t, cons_t = [], []
        for _ in range(args.rounds):
            started = time.perf_counter()
            for patch in patches:
                hashlib.sha256(patch.read_bytes()).hexdigest()
            base_t.append(time.perf_counter() - started)
            started = time.perf_counter()
            every = tally({f"r{n}": hunks_of(p, f"r{n}") for n, p in enumerate(patches)})
            chosen = [h for h in every if len(h.runtimes) >= majority(RUNTIMES)]
            text, conflicts = render(chosen)
            cons_t.append(time.perf_counter() - started)
        assert not conflicts and len(chosen) == 3 * FILES, (len(chosen), conflicts[:3])
        print(f"consensus: {len(chosen)} hunks agreed, {len(every) - len(chosen)} disputed, "
              f"patch {len(text) / 1e3:.0f} kB")  # fmt: skip
        b, c = statistics.median(base_t), statistics.median(cons_t)
        print(f"baseline (hash each diff): {b * 1000:.1f} ms; consensus: {c * 1000:.0f} ms "
              f"(x{c / b:.0f}); target: consensus <= 1000 ms")  # fmt: skip


if __name__ == "__main__":
    main()
