"""Helpers shared by the issue 30 benchmarks (``judge_*.py``): timing with CPU beside the
wall clock, ``median (min–max)`` formatting, paired ratios and the machine's load.

Not a benchmark itself. The scripts put ``benchmarks/`` on ``sys.path`` and import it, as
they import ``sandbox_cost``'s git helpers.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Samples:
    """One variant's measurements, one per counted round: wall seconds, this process's CPU
    seconds (all threads) and its reaped children's CPU seconds."""

    wall: list[float] = field(default_factory=list)
    own: list[float] = field(default_factory=list)
    children: list[float] = field(default_factory=list)

    def add(self, wall: float, own: float = 0.0, children: float = 0.0) -> None:
        self.wall.append(wall)
        self.own.append(own)
        self.children.append(children)


@dataclass
class Clock:
    """What ``timer`` measured, filled in when its block ends."""

    wall: float = 0.0
    own: float = 0.0
    children: float = 0.0


def cpu() -> tuple[float, float]:
    """(this process's CPU seconds, its reaped descendants'), from ``getrusage`` (finer than
    ``os.times``' clock ticks)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


@contextmanager
def timer() -> Iterator[Clock]:
    """Wall and CPU of the block. Children's CPU counts only descendants reaped inside it
    (see ``adopt_orphans`` for a bubblewrap session's)."""
    clock = Clock()
    own, kids = cpu()
    began = time.perf_counter()
    try:
        yield clock
    finally:
        clock.wall = time.perf_counter() - began
        own_after, kids_after = cpu()
        clock.own, clock.children = own_after - own, kids_after - kids


def adopt_orphans() -> None:
    """Make this process a child subreaper. bubblewrap's outer process exits without
    reaping its PID namespace's init, whose CPU (the zygote's and every confined command's)
    then goes to the system's init and is lost to ``RUSAGE_CHILDREN``; as a subreaper this
    process gets that init back and ``reap_orphans`` collects it, and its CPU."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def reap_orphans(wait_s: float = 2.0) -> None:
    """Reap every child left (only call when this process waits on nothing else)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.0005)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def timed(action: Callable[[], object]) -> Clock:
    with timer() as clock:
        action()
    return clock


def ms(values: Sequence[float]) -> float:
    return statistics.median(values) * 1000


def spread(values: Sequence[float], scale: float = 1000.0, digits: int = 1) -> str:
    """``median (min–max)``, in ms by default."""
    med = statistics.median(values) * scale
    return f"{med:.{digits}f} ({min(values) * scale:.{digits}f}–{max(values) * scale:.{digits}f})"


def ratios(ours: Sequence[float], base: Sequence[float]) -> list[float]:
    """Each round's own ratio (the steadiest figure on a shared machine)."""
    return [o / b for o, b in zip(ours, base, strict=True) if b > 0]


def ratio_spread(ours: Sequence[float], base: Sequence[float]) -> str:
    per_round = ratios(ours, base)
    med = statistics.median(ours) / statistics.median(base)
    return (
        f"{med:.2f}x (paired {statistics.median(per_round):.2f}x, "
        f"{min(per_round):.2f}–{max(per_round):.2f}x)"
    )


def verdict(value: float, target: float) -> str:
    return "MET" if value <= target else "MISSED"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def order(names: Sequence[str], round_no: int) -> list[str]:
    """Every variant once per round, the order reversed every other round, so load that
    drifts falls on all of them alike."""
    return list(names) if round_no % 2 == 0 else list(reversed(names))
