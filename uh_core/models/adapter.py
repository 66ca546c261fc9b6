"""uh.adapter.v0: runtime manifests under ``.harness/adapters/`` (contract §5)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field, field_validator

from uh_core.ids import slug_problem
from uh_core.models.base import Open


class AdapterManifest(Open):
    schema_version: Literal["uh.adapter.v0"] = "uh.adapter.v0"
    id: str
    name: str | None = None
    version: str | None = None
    description: str | None = None
    runtime_kind: str = Field(validation_alias=AliasChoices("runtime_kind", "runtime"))
    status: str = "active"
    capabilities: list[str] | dict[str, bool] = Field(default_factory=list)
    supported_sandbox_backends: list[str] = Field(default_factory=list)
    input_formats: list[str] = Field(default_factory=list)
    output_formats: list[str] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _slug(cls, value: str) -> str:
        problem = slug_problem(value)
        if problem:
            raise ValueError(f"adapter id {value!r} {problem}")
        return value

    @property
    def capability_ids(self) -> list[str]:
        if isinstance(self.capabilities, dict):
            return [key for key, on in self.capabilities.items() if on]
        return list(self.capabilities)

    @property
    def active(self) -> bool:
        return self.status == "active"
