"""This process's open descriptors, for tests that a run closes every one it opened.

A pytest worker is not alone in its process: threads of fixtures that outlive a test (the
session's scripted model server accepting a connection, a file watcher reading a folder it
was told about) open descriptors of their own for a moment, at any time. Comparing two bare
listings then fails one run in hundreds for a descriptor nobody here leaked. ``left_open``
compares what each descriptor points at, counts only the kinds the code under test makes
(pipes, pidfds, files under a folder), and gives a new one a moment to close before calling
it leaked: a real leak stays open for good, and is named with its target.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

OURS = ("pipe:", "anon_inode:[pidfd]")  # what the process helper opens besides its logs


def snapshot() -> dict[int, str]:
    """Each open descriptor and what it points at (its ``/proc/self/fd`` link)."""
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            found[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return found


def left_open(
    before: dict[int, str], *, kinds: Iterable[str] = OURS, settle_s: float = 1.0
) -> dict[int, str]:
    """Descriptors open now that were not in ``before`` (or now point elsewhere) and whose
    target starts with one of ``kinds`` (a prefix: ``"pipe:"``, a folder's path): ``{}``
    when none is left ``settle_s`` after the first look."""
    prefixes = tuple(kinds)
    deadline = time.monotonic() + settle_s
    while True:
        new = {
            fd: target
            for fd, target in snapshot().items()
            if before.get(fd) != target and target.startswith(prefixes)
        }
        if not new or time.monotonic() >= deadline:
            return new
        time.sleep(0.05)
