"""A background run of ``uh-core mcp`` (``<state>/mcp-runs/<run_id>.json``): written by the
server that starts it and by its supervisor (uh_core/mcp/supervise.py), read by every server
for the same root, so a run outlives the server that started it and can still be reported
and cancelled by id."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from uh_core.models.base import Open


class McpRun(Open):
    run_id: str
    kind: str  # run | run-all | harness
    mission_id: str | None = None
    command: list[str] = Field(default_factory=list)  # uh-core's arguments
    started_at: str
    server_pid: int  # the server that started it
    supervisor_pid: int = 0
    supervisor_start: int | None = None  # its start time (clock ticks): a reused pid is not it
    child_pid: int | None = None  # uh-core itself
    finished_at: str | None = None
    exit_code: int | None = None
    signal: str | None = None  # the signal that ended uh-core, when one did
    error: str | None = None  # uh-core could not be started
    cancel: list[dict[str, Any]] = Field(default_factory=list)  # what each cancel_run did
    interrupted: str | None = None  # why a stopping server interrupted it
