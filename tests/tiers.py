"""The suite's two tiers: the whole suite, and a quick tier for the edit-test loop
(``python3 -m pytest -m "not slow"``, docs/testing.md).

A test is ``slow`` by measurement, never by guess: ``tests/slow.txt`` lists every test whose
setup, call and teardown together took ``SLOW_S`` seconds or more in a whole-suite run on a
quiet machine, with the time measured; ``tests/measure_slow.py`` writes it from such a run.
The root conftest marks those tests when they are collected, and
``tests/test_tiers.py`` checks that every test the file lists over ``SLOW_S`` is collected
and carries the marker. A test that runs over ``WARN_S`` unmarked is named at the end of any
session (a newly added slow test: measure again).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SLOW_S = 1.0  # setup + call + teardown, whole-suite run, quiet 2-core machine
WARN_S = 3 * SLOW_S  # unmarked and over this in any session: said at its end
SLOW_FILE = Path(__file__).with_name("slow.txt")
_LINE = re.compile(r"^(?P<seconds>\d+(?:\.\d+)?) (?P<nodeid>tests/.+)$")  # ids may hold spaces


@dataclass(frozen=True)
class Measured:
    nodeid: str
    seconds: float


def read_slow(path: Path = SLOW_FILE) -> list[Measured]:
    """``tests/slow.txt``: ``SECONDS NODEID`` per line (the rest of the line is the id); a
    line starting with ``#`` is a comment."""
    found: list[Measured] = []
    if not path.is_file():
        return found
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None:
            raise ValueError(f"{path}:{number}: not 'SECONDS tests/…::test': {raw!r}")
        found.append(Measured(match["nodeid"], float(match["seconds"])))
    return found


def slow_ids(path: Path = SLOW_FILE) -> frozenset[str]:
    return frozenset(m.nodeid for m in read_slow(path) if m.seconds >= SLOW_S)
