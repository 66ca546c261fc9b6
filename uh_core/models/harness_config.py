"""harness.config.yaml (at the repository root): settings of the delivery loop (contract §7)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from uh_core.models.base import Strict


class Profile(Strict):
    name: str
    agent: str | None = None
    runtime: str | None = None
    prompt_prefix: str | None = None
    cost_per_run_hint: float | None = Field(default=None, ge=0)
    match: dict[str, str] | None = None


class HarnessConfig(Strict):
    harness_version: Literal[1] = 1
    agent: str | None = None
    runtime: str | None = None
    test_cmd: str | None = None
    max_attempts: int = Field(default=3, ge=1)
    timeout_s: float | None = Field(default=None, gt=0)
    prompt_prefix: str | None = None
    prompt_prefix_file: str | None = None
    message_report: str | None = None
    protected_paths: list[str] | None = None
    allow_paths: list[str] = Field(default_factory=list)
    rules_file: str | None = None
    budget_seconds: float | None = Field(default=None, gt=0)
    max_requirements: int | None = Field(default=None, ge=1)
    profiles: list[Profile] = Field(default_factory=list)
