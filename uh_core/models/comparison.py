"""runtime-comparison.json (contract §6)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from uh_core.models.base import Plain


class RuntimeRow(Plain):
    runtime: str
    status: Literal["succeeded", "failed", "blocked", "error"]
    exit_code: int | None = None
    duration_ms: int = 0
    diff_hash: str | None = None
    sandbox: str | None = None
    touched_paths: list[str] = Field(default_factory=list)
    final_message: str = ""
    error: str | None = None
    isolation: str | None = None  # how the agent ran: "bwrap" or "none"
    isolation_note: str | None = None
    tampered: list[str] = Field(default_factory=list)  # changes to the operator's repository


class DiffGroup(Plain):
    diff_hash: str
    runtimes: list[str]


class Comparison(Plain):
    schema_version: Literal["uh.runtime-comparison.v0"] = "uh.runtime-comparison.v0"
    mission_id: str
    status: Literal["agreement", "divergent", "failed"]
    base_commit: str | None = None
    created_at: str | None = None
    runtimes: list[RuntimeRow] = Field(default_factory=list)
    groups: list[DiffGroup] = Field(default_factory=list)
    agreement_runtimes: list[str] = Field(default_factory=list)
    divergent_runtimes: list[str] = Field(default_factory=list)
    failed_runtimes: list[str] = Field(default_factory=list)
    findings: list[str] = Field(default_factory=list)
    interrupted: bool = False
