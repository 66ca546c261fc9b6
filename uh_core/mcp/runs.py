"""Background runs: ``mission run``, ``mission run-all`` and ``harness run`` started as
``uh-core`` subprocesses, each under a supervisor of its own session (``supervise.py``), and
kept **on disk** (``<state>/mcp-runs/<run_id>.json``, models/mcp_run.py): any server for the
same root lists, reports and cancels a run by its id, also one started by a server that has
since stopped.

A run's state: ``running`` (its supervisor is the process recorded: pid and start time),
``exited`` (with its exit code or signal, and its ``--json`` result), ``cancelled`` (a
cancel_run ended it: the exit code or signal too), ``interrupted`` (the server that started
it was stopped by a signal and stopped it, or its supervisor is gone without recording an
end). Cancel is the CLI's own ``mission cancel ID`` / ``harness cancel`` (recording partial
state), then Ctrl-C to the run's process group if it is still there. A run outlives a server
whose client goes away (stdin closed); a server stopped by a signal (Ctrl-C, SIGTERM,
SIGHUP) interrupts the runs it started and waits for them (``stop_all``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver.exceptions import ToolError

from uh_core.clock import timestamp
from uh_core.ids import is_slug
from uh_core.layout import Layout
from uh_core.mcp.calls import call_json, tool_error, uh_core_argv
from uh_core.mcp.supervise import update
from uh_core.models.mcp_run import McpRun
from uh_core.proc.spawn import job_signals_preexec
from uh_core.procid import process_state, start_time

OUTPUT_CAP = 1 << 20  # bytes of a run's stdout/stderr returned by status
STOP_WAIT_S = 60.0
SIGNAL_STOP_S = 20.0  # a signalled server's wait for its runs' records, then SIGKILL
LISTED = 50  # run_status of an unknown id names at most this many known ones


def _tail(path: Path, cap: int = OUTPUT_CAP) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - cap))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


class Runs:
    """Every run of this root's servers (the registry folder); ``procs`` are the ones this
    server started, reaped here."""

    def __init__(self, layout: Layout) -> None:
        self.root = str(layout.root)
        self.folder = layout.state_dir / "mcp-runs"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def record_file(self, run_id: str) -> Path:
        return self.folder / f"{run_id}.json"

    def start(self, kind: str, mission_id: str | None, argv: list[str]) -> dict[str, Any]:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        run_id = f"{kind}-{stamp}-{secrets.token_hex(3)}"
        full = [*argv, "--json", "--root", self.root]
        record = self.record_file(run_id)
        meta = McpRun(
            run_id=run_id, kind=kind, mission_id=mission_id, command=full,
            started_at=timestamp(), server_pid=os.getpid(),
        )  # fmt: skip
        record.write_text(meta.model_dump_json(indent=2) + "\n", encoding="utf-8")
        supervisor = [sys.executable, "-m", "uh_core.mcp.supervise", str(record), "--"]
        proc = subprocess.Popen(
            [*supervisor, *uh_core_argv(), *full],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            # SIGINT is how it is cancelled: at its default even when this server was
            # started with it ignored (a background job)
            preexec_fn=job_signals_preexec(),
        )
        self.procs[run_id] = proc
        started = start_time(proc.pid)
        update(record, lambda d: d.update(supervisor_pid=proc.pid, supervisor_start=started))
        return self.status(run_id)

    def read(self, run_id: str) -> McpRun:
        path = self.record_file(run_id) if is_slug(run_id) else None
        try:
            if path is None:
                raise FileNotFoundError(run_id)
            return McpRun.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            known = self.known()
            shown = ", ".join(known[-LISTED:]) or "none"
            raise tool_error(f"no run {run_id} for this root (known: {shown})") from None
        except ValueError as exc:
            raise tool_error(f"{path}: not a run record: {exc}") from None

    def known(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        return sorted(p.stem for p in self.folder.glob("*.json"))

    def _reap(self, run_id: str) -> None:
        proc = self.procs.get(run_id)
        if proc is not None:
            proc.poll()  # ours: never left a zombie

    def state(self, run: McpRun) -> str:
        self._reap(run.run_id)
        if run.finished_at is not None:
            if run.interrupted:
                return "interrupted"
            return "cancelled" if run.cancel else "exited"
        alive = process_state(run.supervisor_pid, run.supervisor_start) == "running"
        return "running" if alive and run.supervisor_pid else "interrupted"

    def status(self, run_id: str) -> dict[str, Any]:
        run = self.read(run_id)
        state = self.state(run)
        record = self.record_file(run_id)
        data: dict[str, Any] = {
            "run_id": run.run_id,
            "kind": run.kind,
            "mission_id": run.mission_id,
            "command": " ".join(["uh-core", *run.command]),
            "pid": run.child_pid or run.supervisor_pid,
            "started_at": run.started_at,
            "started_by": run.server_pid,
            "state": state,
            "exit_code": run.exit_code,
            "signal": run.signal,
            "finished_at": run.finished_at,
            "result": None,
            "stderr": _tail(record.with_suffix(".err"))[-4096:],
        }
        if run.finished_at is not None:
            text = _tail(record.with_suffix(".out"))
            try:
                data["result"] = json.loads(text) if text.strip() else None
            except ValueError:
                data["result"] = {"output": text[-OUTPUT_CAP:]}
        if state == "interrupted":
            data["interrupted"] = run.interrupted or (
                "its supervisor is gone without recording how the run ended"
            )
        if run.cancel:
            data["cancel"] = run.cancel
        if run.error:
            data["error"] = run.error
        return data

    def list(self) -> list[dict[str, Any]]:
        return [self.status(run_id) for run_id in self.known()[-LISTED:]]

    async def cancel(self, run_id: str, reason: str | None) -> dict[str, Any]:
        run = self.read(run_id)
        if self.state(run) != "running":
            return self.status(run_id)
        record = self.record_file(run_id)
        extra = ["--reason", reason] if reason else []
        if run.kind == "harness":
            argv = ["harness", "cancel", *extra, "--json"]
        else:
            assert run.mission_id is not None
            argv = ["mission", "cancel", run.mission_id, *extra, "--json"]
        try:
            said: dict[str, Any] = await call_json(*argv, "--root", self.root)
        except ToolError as exc:  # e.g. not registered yet: nothing to cancel by name
            said = {"error": str(exc)}
        update(record, lambda d: d.setdefault("cancel", []).append(said))
        await self._wait(run_id, 5.0)
        if self.state(self.read(run_id)) == "running":  # not registered yet: as Ctrl-C would
            with contextlib.suppress(OSError):
                os.killpg(run.supervisor_pid, signal.SIGINT)
            sent = {"signal": "SIGINT", "to": "the run's process group"}
            update(record, lambda d: d.setdefault("cancel", []).append(sent))
        await self._wait(run_id, STOP_WAIT_S)
        return self.status(run_id)

    async def _wait(self, run_id: str, seconds: float) -> None:
        with anyio.move_on_after(seconds):
            while self.state(self.read(run_id)) == "running":
                await anyio.sleep(0.1)

    def stop_all(self, wait_s: float = SIGNAL_STOP_S) -> None:
        """Interrupt every run this server started that is still running (SIGTERM, passed on
        by its supervisor: uh-core stops its agent or check and records ``interrupted``),
        wait up to ``wait_s`` for them, then kill what is left of its group."""
        why = "the MCP server that started it was stopped by a signal"
        running = [
            (run_id, proc) for run_id, proc in self.procs.items() if proc.poll() is None
        ]  # fmt: skip
        for run_id, proc in running:
            with contextlib.suppress(OSError, ValueError):
                update(self.record_file(run_id), lambda d: d.update(interrupted=why))
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + wait_s
        for _run_id, proc in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.0, deadline - time.monotonic()))
            if proc.poll() is None:  # not reaped: its group id is still its own
                with contextlib.suppress(OSError):
                    os.killpg(proc.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(5.0)

    def close(self) -> None:
        """The client went away: the runs go on (their supervisors record how they end)."""
        for run_id in list(self.procs):
            self._reap(run_id)
