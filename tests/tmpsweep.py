"""Older runs' temporary folders, removed in the background instead of after the summary.

pytest keeps the temporary folders of the last three sessions (``tmp_path_retention_count``)
and, at exit, after the summary is printed, removes the ones before them. A whole run here
leaves some 700 MB of small files (git repositories, sandboxes, worktrees): removing one took
about 27 s of the shell's wait after pytest had said it was done, and a quick-tier run waited
2-8 s for the same.

At the session's start, the controller moves the folders pytest would remove at its exit
(the same ones: those of older sessions beyond the count, with no lock of a live session)
aside under one name, and a process at the lowest CPU priority removes them while the tests
run; pytest's exit then finds nothing to remove. A sweep cut short (the machine stopped) is
finished by the next session's. What is kept, and for how long, is pytest's rule, unchanged.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

TRASH = "uh-trash-"  # pytest's own cleanup looks only at pytest-N and garbage-* names
PREFIX = "pytest-"  # the numbered session folders' prefix (_pytest.tmpdir)
_REMOVE = (
    "import os, sys\n"
    "os.nice(19)\n"
    "from _pytest.pathlib import rm_rf\n"  # pytest's own: read-only folders included
    "from pathlib import Path\n"
    "for name in sys.argv[1:]:\n"
    "    rm_rf(Path(name))\n"
)


def sweep(config: pytest.Config) -> None:
    """Move older sessions' folders aside and start their removal in the background."""
    if config.option.basetemp or hasattr(config, "workerinput"):
        return  # a fixed --basetemp is not numbered; xdist's workers use the controller's
    try:
        from _pytest.pathlib import cleanup_candidates, get_lock_path

        basetemp = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
        keep = int(config.getini("tmp_path_retention_count"))
    except (AttributeError, ImportError, ValueError):
        return  # pytest's internals moved: its own exit cleanup does it, as before
    root = basetemp.parent
    if keep == 0 or not basetemp.name.startswith(PREFIX):
        return
    doomed: list[Path] = [p for p in root.iterdir() if p.name.startswith(TRASH)]
    for path in cleanup_candidates(root, PREFIX, keep):
        if path == basetemp or get_lock_path(path).exists():
            continue  # ours, or a session's that may still run: pytest's lock rules decide
        aside = root / f"{TRASH}{uuid.uuid4().hex}"
        try:
            path.rename(aside)
        except OSError:
            continue
        doomed.append(aside)
    if doomed:
        subprocess.Popen(
            [sys.executable, "-c", _REMOVE, *map(str, doomed)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives the session if it must; Ctrl-C is not for it
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
