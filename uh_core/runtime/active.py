"""Runs in progress, registered so a cancel can find and stop them.

Each ``mission run`` writes ``.harness/missions/<id>/active/<sandbox-id>.json`` with its own
pid and its agent's process group while it runs, and removes it when it ends. Each ``harness
run`` writes ``.harness/runs/active/<run-id>.json`` (the runner's pid, its start time, the
host, and where the run is: mission and attempt), rewritten whole as the run moves on and
removed when it ends. A cancel leaves its reason beside the registration (``.reason``) and
sends SIGTERM; the runner reads the reason in its handler.

A pid alone is not a process: the kernel reuses pids. The start time (``/proc/<pid>/stat``
field 22, clock ticks since boot) names the process, so a registration whose runner died and
whose pid now belongs to something else is stale, never signalled. The identity helpers
live in ``uh_core.procid``, shared with the owners recorded on the event logs.

A registration is read through the bounded JSON loader (``uh_core.yamllimits``): one over the
caps (a hostile or broken file) is a ``ValidationError`` naming it (exit 2 from the CLI),
never a traceback; one that is half-written or not ours is skipped, as before.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from uh_core.errors import UhError, ValidationError
from uh_core.fileio import write_text_atomic
from uh_core.layout import Layout
from uh_core.procid import State as State
from uh_core.procid import host as host
from uh_core.procid import process_state as process_state
from uh_core.procid import start_time as start_time
from uh_core.yamllimits import YamlLimitError, read_json

T = TypeVar("T")


def _load(path: Path, kind: type[T]) -> T | None:
    """One registration: None when it is gone, half-written or not ours; a
    ``ValidationError`` (one line naming the file) when it is over the reading caps."""
    try:
        data: Any = read_json(path)
    except YamlLimitError as exc:
        raise ValidationError(
            [f"{path}: (document): refused: {exc} (fix: remove it if no run is in progress)"]
        ) from None
    except (OSError, ValueError):  # UnicodeDecodeError and bad JSON are ValueErrors
        return None
    if not isinstance(data, dict):
        return None
    try:
        return kind(**data)
    except TypeError:
        return None


@dataclass
class ActiveRun:
    mission_id: str
    runtime: str
    sandbox_id: str
    runner_pid: int  # the uh-core process driving the run
    agent_pgid: int  # the agent's process group
    started_at: str
    runner_start: int | None = None  # the runner's start time (pid reuse)


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
        run = _load(path, ActiveRun)  # None: half-written or foreign, not a run to act on
        if run is not None:
            runs.append((path, run))
    return runs


def runner_alive(pid: int, started: int | None = None) -> bool:
    """True if ``pid`` is a live uh-core process (a reused pid is not)."""
    if process_state(pid, started) != "running":
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True
    return b"uh_core" in cmdline or b"uh-core" in cmdline


def request_cancel(path: Path, reason: str) -> None:
    """Leave the reason beside the registration for the runner to pick up on SIGTERM."""
    write_text_atomic(path.with_suffix(".reason"), reason + "\n")


def take_reason(path: Path, default: str) -> str:
    """The reason a cancel left beside ``path`` (consumed), or ``default``."""
    reason_file = path.with_suffix(".reason")
    try:
        text = reason_file.read_text(encoding="utf-8").strip()
    except OSError:
        return default
    reason_file.unlink(missing_ok=True)
    return text or default


def cancel_reason(layout: Layout, mission_id: str, default: str) -> str:
    """The reason ``mission cancel`` left for this process's run, or ``default`` (also when
    a registration cannot be read: this runs in a signal handler)."""
    try:
        runs = active_runs(layout, mission_id)
    except (OSError, UhError):
        return default
    for path, run in runs:
        if run.runner_pid == os.getpid() and path.with_suffix(".reason").exists():
            return take_reason(path, default)
    return default


# --- harness runs ---------------------------------------------------------------------


@dataclass
class HarnessActive:
    """A ``harness run`` in progress: who runs it, and where it is."""

    run_id: str
    pid: int
    start_time: int | None
    host: str
    started_at: str
    missions: list[str] = field(default_factory=list)  # the run's missions, in order
    mission: str | None = None  # the mission in progress (the latest started, with --jobs)
    attempt: int = 0  # its attempt (0: preparing its sandbox)
    running: dict[str, int] = field(default_factory=dict)  # every mission in progress → attempt
    runtime: str | None = None  # the run's agent (a mission's profile may name another)
    executor: str = "local"  # local | ray (its agents run on the cluster's nodes)
    sandboxes: dict[str, str] = field(default_factory=dict)  # mission → its sandbox in use

    def state(self) -> State:
        return process_state(self.pid, self.start_time, self.host)

    def where(self) -> str:
        if isinstance(self.running, dict) and len(self.running) > 1:  # --jobs N: side by side
            return "missions " + ", ".join(
                f"{mission} ({f'attempt {n}' if n else 'preparing'})"
                for mission, n in sorted(self.running.items())
            )
        if self.mission is None:
            return "no mission started yet"
        return f"mission {self.mission}, " + (
            f"attempt {self.attempt}" if self.attempt else "preparing"
        )


def harness_dir(layout: Layout) -> Path:
    return layout.ledgers_dir / "active"


def harness_path(layout: Layout, run_id: str) -> Path:
    from uh_core.ids import check_id

    return harness_dir(layout) / f"{check_id(run_id, 'run')}.json"


def write_harness(layout: Layout, run: HarnessActive) -> Path:
    path = harness_path(layout, run.run_id)
    write_text_atomic(path, json.dumps(asdict(run), indent=2) + "\n")
    return path


def read_harness(path: Path) -> HarnessActive | None:
    """One registration; None when it is gone, half-written or foreign; a
    ``ValidationError`` when it is over the reading caps."""
    return _load(path, HarnessActive)


def harness_runs(layout: Layout) -> list[tuple[Path, HarnessActive]]:
    """Every harness registration that parses, oldest run first (not checked for life)."""
    folder = harness_dir(layout)
    if not folder.is_dir():
        return []
    found = ((path, read_harness(path)) for path in sorted(folder.glob("*.json")))
    return [(path, run) for path, run in found if run is not None]


def harness_sandboxes(layout: Layout) -> dict[str, str]:
    """Sandbox id → the live harness run (its id) that holds it; a registration whose runner
    is gone holds nothing."""
    held: dict[str, str] = {}
    try:
        runs = harness_runs(layout)
    except (OSError, UhError):
        return held
    for _, run in runs:
        if isinstance(run.sandboxes, dict) and run.state() != "gone":
            held.update({str(s): run.run_id for s in run.sandboxes.values()})
    return held


class HarnessRegistration:
    """This process's registration of its harness run, kept current by ``at``."""

    def __init__(
        self,
        layout: Layout,
        run_id: str,
        missions: list[str],
        started_at: str,
        runtime: str | None = None,
        executor: str = "local",
    ):
        pid = os.getpid()
        self.layout = layout
        self.run = HarnessActive(run_id, pid, start_time(pid), host(), started_at, missions)
        self.run.runtime, self.run.executor = runtime, executor
        self.path = write_harness(layout, self.run)
        self._lock = threading.Lock()  # missions running side by side report at once

    def at(self, mission_id: str, attempt: int, sandbox_id: str | None = None) -> None:
        """``mission_id`` is at ``attempt`` (0: preparing; negative: it has ended), in
        ``sandbox_id`` when it has one: a sandbox a live run holds is never discarded."""
        with self._lock:
            if attempt < 0:
                self.run.running.pop(mission_id, None)
                self.run.sandboxes.pop(mission_id, None)
            else:
                self.run.mission, self.run.attempt = mission_id, attempt
                self.run.running[mission_id] = attempt
                if sandbox_id is not None:
                    self.run.sandboxes[mission_id] = sandbox_id
            write_harness(self.layout, self.run)

    def reason(self, default: str) -> str:
        return take_reason(self.path, default)

    def close(self) -> None:
        unregister(self.path)
