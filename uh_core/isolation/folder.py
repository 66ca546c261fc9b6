"""Stopping what works in one folder: the unconfined judge's room after its stage.

Under bubblewrap a stage's commands die with their PID namespace. Unconfined, a command may
leave a daemon behind; this process is a child subreaper while it judges, so the daemon is
a child of ours, found by where it works (``/proc/<pid>/cwd`` inside the folder) or by the
room's marker in its environment (``UH_JUDGE_ROOM``, which every descendant inherits
unless it clears its environment). It is frozen, killed and named, with no round cap
(``stopping.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

from uh_core import procid
from uh_core.isolation.proctree import Proc
from uh_core.isolation.stopping import stop_tree
from uh_core.isolation.survivors import Survivors

GRACE_S = 0.5
KILL_WAIT_S = 5.0
MARKER = "UH_JUDGE_ROOM"


def _inside(path: str | None, folder: str) -> bool:
    if not path:
        return False
    real = os.path.realpath(path)
    return real == folder or real.startswith(folder + os.sep)


def works_in(pid: int, folder: Path, marker: str = MARKER) -> bool:
    """Whether ``pid`` works in ``folder`` or carries ``marker`` naming it."""
    where = os.path.realpath(folder)
    return _inside(procid.cwd(pid), where) or _inside(procid.environ(pid, marker), where)


def _group_led(proc: Proc) -> int | None:
    return proc.pgid if proc.pgid == proc.pid and proc.pgid != os.getpgrp() else None


def stop_in(folder: Path, marker: str = MARKER) -> Survivors:
    """Stop and reap every child of ours working in ``folder`` (see the module doc)."""
    return stop_tree(
        lambda proc: not proc.ended and works_in(proc.pid, folder, marker),
        _group_led,
        grace_s=GRACE_S,
        kill_wait_s=KILL_WAIT_S,
    )
