"""uh.runtime-result.v0: what one runtime did in one sandbox (contract §5)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from uh_core.models.base import Plain


class RuntimeChanges(Plain):
    diff_ref: str | None = None
    files_changed: list[str] = Field(default_factory=list)


class RuntimeResult(Plain):
    schema_version: Literal["uh.runtime-result.v0"] = "uh.runtime-result.v0"
    mission_id: str
    runtime: str
    # rate_limited: the provider refused it (uh_core/adapters/ratelimit.py), not a failure
    status: Literal["completed", "failed", "cancelled", "blocked", "rate_limited"]
    summary: str = ""
    exit_code: int | None = None
    started_at: str
    finished_at: str | None = None
    changes: RuntimeChanges = Field(default_factory=RuntimeChanges)
    blockers: list[str] = Field(default_factory=list)
    logs: dict[str, Any] = Field(default_factory=dict)
    # Written by this project beside the TypeScript uh's fields (runtime-session.yaml):
    sandbox_id: str | None = None
    base_commit: str | None = None
    diff_hash: str | None = None
    command: str | None = None
    usage: dict[str, Any] | None = None
    retry_after_s: float | None = None  # rate_limited: when the limit lifts, where said
    isolation: str | None = None  # how the agent ran: "bwrap" or "none"
    isolation_note: str | None = None  # why it ran unconfined
    survivors: list[str] = Field(default_factory=list)  # what it left running, stopped by uh
    tampered: list[str] = Field(default_factory=list)  # each change to the operator's repo
