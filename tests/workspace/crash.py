"""Helpers for the kill -9 tests: wait with deadlines, read what every reader shows."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conftest import Repo
from tests.runtime.helpers import live_processes_with

DEADLINE_S = 120.0  # a busy two-core machine running the suite in parallel


def wait_until(what: str, check: Callable[[], object], seconds: float = DEADLINE_S) -> Any:
    """Poll ``check`` until it returns something truthy; fail naming ``what`` at the deadline."""
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"{what}: not seen within {seconds:g} s"
        time.sleep(0.05)


def has_event(log: Path, event: str, **fields: object) -> Callable[[], dict[str, Any] | None]:
    """A check for ``wait_until``: the first event of that type (with those fields) in ``log``."""

    def check() -> dict[str, Any] | None:
        try:
            lines = log.read_text(encoding="utf-8").splitlines()
        except OSError:
            return None
        for line in lines:
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if data.get("event") == event and all(data.get(k) == v for k, v in fields.items()):
                return dict(data)
        return None

    return check


def last_timestamp(log: Path, run_id: str) -> str:
    """The timestamp of ``run_id``'s last event in ``log``: when it was last seen alive."""
    stamps = [
        data["timestamp"]
        for data in map(json.loads, log.read_text(encoding="utf-8").splitlines())
        if data.get("run_id") == run_id
    ]
    return str(stamps[-1])


def kill9(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def kill_leftovers(marker: str) -> None:
    for pid in live_processes_with(marker):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def status(repo: Repo) -> dict[str, Any]:
    result = repo.uh("status", "--json")
    assert result.code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def mission_row(repo: Repo, mission_id: str) -> dict[str, Any]:
    result = repo.uh("mission", "list", "--json")
    assert result.code == 0, result.stderr
    rows = {row["id"]: row for row in json.loads(result.stdout)["missions"]}
    row: dict[str, Any] = rows[mission_id]
    return row


def dashboard(repo: Repo, *args: str) -> str:
    """One frame of ``uh --once`` as text."""
    proc = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--root", str(repo.root), *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout
