"""Background runs: ``mission run``, ``mission run-all`` and ``harness run`` started as
``uh-core`` subprocesses, each in its own session with output to files (as the dashboard
starts them, ``uh_tui/launch.py``), and known to this server by a handle id.

Status is the process's (running, or its exit code and ``--json`` document); cancel is the
CLI's own ``mission cancel ID`` / ``harness cancel`` (through the run registrations of
``uh_core.runtime.active``, recording partial state), then Ctrl-C to the run's process
group if it is still there (it had not registered yet). A run outlives a server whose
client goes away (stdin closed): it is its own session, and the event logs show it to the
next observer. A server stopped by a signal (Ctrl-C, SIGTERM, SIGHUP) interrupts the runs it
started and waits for them (``stop_all``): nothing it launched is left running.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import IO, Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError

from uh_core.clock import timestamp
from uh_core.mcp.calls import call_json, tool_error, uh_core_argv
from uh_core.proc.spawn import job_signals_preexec

OUTPUT_CAP = 1 << 20  # bytes of a run's stdout/stderr returned by status
STOP_WAIT_S = 60.0
SIGNAL_STOP_S = 20.0  # a signalled server's wait for its runs' records, then SIGKILL


@dataclass
class Run:
    run_id: str
    kind: str
    mission_id: str | None
    argv: list[str]
    proc: subprocess.Popen[bytes]
    out: IO[bytes]
    err: IO[bytes]
    started_at: str
    cancelled: list[Any] = field(default_factory=list)

    def status(self) -> dict[str, Any]:
        code = self.proc.poll()
        data: dict[str, Any] = {
            "run_id": self.run_id,
            "kind": self.kind,
            "mission_id": self.mission_id,
            "command": " ".join(["uh-core", *self.argv]),
            "pid": self.proc.pid,
            "started_at": self.started_at,
            "state": "running" if code is None else "exited",
            "exit_code": code,
            "result": None,
            "stderr": _read(self.err)[-4096:],
        }
        if code is not None:
            text = _read(self.out)
            try:
                data["result"] = json.loads(text) if text.strip() else None
            except ValueError:
                data["result"] = {"output": text[-OUTPUT_CAP:]}
        if self.cancelled:
            data["cancel"] = self.cancelled
        return data


def _read(handle: IO[bytes]) -> str:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(max(0, size - OUTPUT_CAP))
    return handle.read().decode("utf-8", "replace")


class Runs:
    """The runs this server started; ``close()`` leaves the running ones running."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.runs: dict[str, Run] = {}
        self._ids = itertools.count(1)

    def start(self, kind: str, mission_id: str | None, argv: list[str]) -> dict[str, Any]:
        out = tempfile.TemporaryFile()  # noqa: SIM115 (kept while the run is known)
        err = tempfile.TemporaryFile()  # noqa: SIM115
        full = [*argv, "--json", "--root", self.root]
        proc = subprocess.Popen(
            [*uh_core_argv(), *full],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            # SIGINT is how it is cancelled: at its default even when this server was
            # started with it ignored (a background job)
            preexec_fn=job_signals_preexec(),
        )
        run_id = f"{kind}-{next(self._ids)}"
        run = Run(run_id, kind, mission_id, full, proc, out, err, timestamp())
        self.runs[run_id] = run
        return run.status()

    def get(self, run_id: str) -> Run:
        run = self.runs.get(run_id)
        if run is None:
            known = ", ".join(sorted(self.runs)) or "none"
            raise tool_error(f"no run {run_id} started by this server (known: {known})")
        return run

    async def cancel(self, run_id: str, reason: str | None) -> dict[str, Any]:
        run = self.get(run_id)
        if run.proc.poll() is None:
            extra = ["--reason", reason] if reason else []
            if run.kind == "harness":
                argv = ["harness", "cancel", *extra, "--json"]
            else:
                assert run.mission_id is not None
                argv = ["mission", "cancel", run.mission_id, *extra, "--json"]
            try:
                run.cancelled.append(await call_json(*argv, "--root", self.root))
            except ToolError as exc:  # e.g. not registered yet: nothing to cancel by name
                run.cancelled.append({"error": str(exc)})
            await self._wait(run, 5.0)
            if run.proc.poll() is None:  # not registered yet: as Ctrl-C would
                with contextlib.suppress(OSError):
                    os.killpg(run.proc.pid, signal.SIGINT)
                run.cancelled.append({"signal": "SIGINT", "to": "the run's process group"})
            await self._wait(run, STOP_WAIT_S)
        return run.status()

    async def _wait(self, run: Run, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            while run.proc.poll() is None:
                await anyio.sleep(0.1)

    def stop_all(self, wait_s: float = SIGNAL_STOP_S) -> None:
        """Interrupt every run still running (SIGTERM to its runner: it stops its agent or
        check and records ``interrupted``), wait up to ``wait_s`` for them, then kill what
        is left of a group whose runner did not end; then ``close``."""
        running = [run for run in self.runs.values() if run.proc.poll() is None]
        for run in running:
            with contextlib.suppress(OSError):
                os.kill(run.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + wait_s
        for run in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                run.proc.wait(max(0.0, deadline - time.monotonic()))
            if run.proc.poll() is None:  # not reaped: its group id is still its own
                with contextlib.suppress(OSError):
                    os.killpg(run.proc.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    run.proc.wait(5.0)
        self.close()

    def close(self) -> None:
        for run in self.runs.values():
            if run.proc.poll() is not None:
                run.out.close()
                run.err.close()
