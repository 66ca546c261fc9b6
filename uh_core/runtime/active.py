"""Runs in progress, registered so ``mission cancel`` can find and stop them.

Each ``mission run`` writes ``.harness/missions/<id>/active/<sandbox-id>.json`` with its own
pid and its agent's process group while it runs, and removes it when it ends.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from uh_core.fileio import write_text_atomic
from uh_core.layout import Layout


@dataclass
class ActiveRun:
    mission_id: str
    runtime: str
    sandbox_id: str
    runner_pid: int  # the uh-core process driving the run
    agent_pgid: int  # the agent's process group
    started_at: str


def _dir(layout: Layout, mission_id: str) -> Path:
    return layout.mission_dir(mission_id) / "active"


def register(layout: Layout, run: ActiveRun) -> Path:
    path = _dir(layout, run.mission_id) / f"{run.sandbox_id}.json"
    write_text_atomic(path, json.dumps(asdict(run), indent=2) + "\n")
    return path


def unregister(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.with_suffix(".reason").unlink(missing_ok=True)


def active_runs(layout: Layout, mission_id: str) -> list[tuple[Path, ActiveRun]]:
    folder = _dir(layout, mission_id)
    if not folder.is_dir():
        return []
    runs = []
    for path in sorted(folder.glob("*.json")):
        try:
            runs.append((path, ActiveRun(**json.loads(path.read_text(encoding="utf-8")))))
        except (OSError, ValueError, TypeError):
            continue  # half-written or foreign: not a run we can act on
    return runs


def runner_alive(pid: int) -> bool:
    """True if ``pid`` is a live uh-core process (a reused pid is not)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    if stat.rsplit(")", 1)[1].split()[0] == "Z":
        return False
    return b"uh_core" in cmdline or b"uh-core" in cmdline


def request_cancel(path: Path, reason: str) -> None:
    """Leave the reason beside the registration for the runner to pick up on SIGTERM."""
    write_text_atomic(path.with_suffix(".reason"), reason + "\n")


def cancel_reason(layout: Layout, mission_id: str, default: str) -> str:
    """The reason ``mission cancel`` left for this process's run, or ``default``."""
    for path, run in active_runs(layout, mission_id):
        reason_file = path.with_suffix(".reason")
        if run.runner_pid == os.getpid() and reason_file.exists():
            text = reason_file.read_text(encoding="utf-8").strip()
            reason_file.unlink(missing_ok=True)
            return text or default
    return default
