"""uh.project.v0 (project.yaml) and uh.sandboxes-index.v0 shells written by ``init``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from uh_core.models.base import Open


class Project(Open):
    schema_version: Literal["uh.project.v0"] = "uh.project.v0"
    id: str
    name: str
    root_path: str = "."
    created_at: str | None = None
    issue_sources: list[Any] = Field(default_factory=list)
    default_workflow_profiles: list[str] = Field(default_factory=list)
    artifact_schema_version: str = "uh.project.v0"
