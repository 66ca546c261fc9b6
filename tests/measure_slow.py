#!/usr/bin/env python3
"""Write ``tests/slow.txt`` from a whole-suite run: every test whose setup, call and
teardown together took ``tests.tiers.SLOW_S`` or more (docs/testing.md, "Tiers").

    python3 tests/measure_slow.py                 # runs the whole suite once, then writes
    python3 tests/measure_slow.py --from LOG      # reads a `pytest --durations=0` output

Run it on a quiet machine (the load is printed and written into the file's head); the
suite's own `-n auto` is used, as CI runs it.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.tiers import SLOW_FILE, SLOW_S  # noqa: E402

_DURATION = re.compile(r"^([0-9.]+)s (?:call|setup|teardown)\s+(tests/.+?)\s*$")


def durations(text: str) -> dict[str, float]:
    """Each test's setup + call + teardown from ``pytest --durations=0 -vv`` output."""
    found: dict[str, float] = collections.defaultdict(float)
    for line in text.splitlines():
        match = _DURATION.match(line)
        if match:
            found[match[2]] += float(match[1])
    return dict(found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="log", type=Path, help="a --durations=0 -vv output")
    args = parser.parse_args()
    load = os.getloadavg()
    code = 0
    if args.log:
        text = args.log.read_text(encoding="utf-8")
        source = f"the run logged in {args.log.name}"
    else:
        began = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--durations=0", "-vv", "-q", "-p", "no:randomly"],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
        text = done.stdout
        source = f"a whole-suite run of {time.monotonic() - began:.0f} s (exit {done.returncode})"
        kept = Path(tempfile.gettempdir()) / "uh-measure-slow.log"
        kept.write_text(text, encoding="utf-8")
        print(f"the run's output: {kept} (exit {done.returncode})")
        code = done.returncode
    found = durations(text)
    slow = sorted(((s, n) for n, s in found.items() if s >= SLOW_S), reverse=True)
    head = [
        f"# Tests that took {SLOW_S:g} s or more (setup + call + teardown): marked slow",
        f"# (tests/tiers.py). Written by tests/measure_slow.py from {source},",
        f"# {len(found)} tests timed; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} when written.",
    ]
    lines = [f"{seconds:.2f} {nodeid}" for seconds, nodeid in slow]
    SLOW_FILE.write_text("\n".join([*head, *lines]) + "\n", encoding="utf-8")
    total = sum(found.values())
    marked = sum(s for s, _ in slow)
    print(
        f"{len(slow)} of {len(found)} tests marked slow ({marked:.0f} of {total:.0f} "
        f"test-seconds); the quick tier keeps {len(found) - len(slow)} ({total - marked:.0f} s)"
    )
    return code  # a failing run's times are still measured; its exit is still said


if __name__ == "__main__":
    sys.exit(main())
