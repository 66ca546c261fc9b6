"""uh.adapter.v0: runtime manifests under ``.harness/adapters/`` (contract §5)."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import AliasChoices, Field, field_validator

from uh_core.ids import slug_problem
from uh_core.models.base import Open

# A variable name or a glob of one: letters, digits, underscore, fnmatch's * ? [ ] !
_ENV_PATTERN = re.compile(r"^[A-Za-z0-9_*?\[\]!-]+$")


def env_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot name environment variables, or None."""
    if not pattern.strip():
        return "is empty; fix: remove it or write a variable name or glob such as MY_*"
    if not _ENV_PATTERN.match(pattern):
        return (
            f"{pattern!r} is not a variable name or glob; fix: letters, digits, _ and the "
            "wildcards * ? [ ] only (e.g. OPENAI_API_KEY, MY_*)"
        )
    return None


def check_env_patterns(patterns: list[str] | None) -> list[str] | None:
    """A validator's body (``env_pass`` here, ``agent_env`` in harness.config.yaml)."""
    for pattern in patterns or []:
        problem = env_pattern_problem(pattern)
        if problem:
            raise ValueError(f"variable pattern {problem}")
    return patterns


class AdapterManifest(Open):
    schema_version: Literal["uh.adapter.v0"] = "uh.adapter.v0"
    id: str = Field(
        description="The runtime's id: the file's name without .yaml, as in --runtime ID."
    )
    name: str | None = None
    version: str | None = None
    description: str | None = None
    runtime_kind: str = Field(
        validation_alias=AliasChoices("runtime_kind", "runtime"),
        description=(
            "Which adapter runs it: script, command (no agent CLI), codex, claude (alias "
            "claude-code), pi, oh-my-pi (alias omp), aider, hermes. Also read as runtime."
        ),
    )
    status: str = Field(
        default="active",
        description=(
            "active: run-all's default set includes it; experimental, deprecated, inactive: "
            "it runs only when named."
        ),
    )
    capabilities: list[str] | dict[str, bool] = Field(default_factory=list)
    supported_sandbox_backends: list[str] = Field(default_factory=list)
    input_formats: list[str] = Field(default_factory=list)
    output_formats: list[str] = Field(default_factory=list)
    config: dict[str, Any] = Field(default_factory=dict)
    env_pass: list[str] | None = Field(
        default=None,
        description=(
            "The variables of the operator's environment this runtime receives besides the "
            "basics (PATH, HOME, LANG, proxies, ...), uh's own and harness.config.yaml's "
            "agent_env: names or fnmatch globs (OPENAI_API_KEY, CLAUDE_*). It replaces the "
            "kind's defaults; absent, the kind's defaults apply (script and command: none). "
            "Everything else of the operator's shell is dropped (docs/adapters.md)."
        ),
    )

    _env_pass = field_validator("env_pass")(check_env_patterns)

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
