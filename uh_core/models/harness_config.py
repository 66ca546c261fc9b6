"""harness.config.yaml (at the repository root): settings of the delivery loop (contract §7).

Unknown keys are errors (a typo such as ``protected_path:`` would silently open the write
scope). Every value here can be overridden by a ``uh-core harness run`` flag, except the
write scope (``protected_paths``/``allow_paths``), which is never a flag.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from uh_core.models.adapter import check_env_patterns
from uh_core.models.base import Strict
from uh_core.models.usage import ModelPrice

PROMPT_PLACEHOLDER = "{prompt_file}"

# Files an agent may not modify or delete (creating new ones is fine); replaced by
# ``protected_paths``, opened by ``allow_paths``.
DEFAULT_PROTECTED_PATHS: tuple[str, ...] = (
    "harness.config.yaml",
    ".harness/profiles.yaml",  # which agent, prefix and declared cost a mission gets
    ".harness/missions/**/mission.yaml",
    "spec.md",
    "AI_RULES.md",
    "features/**/*.feature",
    "docs/specs/**",
)


def _blank_is_none(value: str | None) -> str | None:
    return value if value and value.strip() else None


def _check_globs(value: list[str] | None) -> list[str] | None:
    for glob in value or []:
        if not glob.strip():
            raise ValueError("an empty glob matches nothing; fix: remove it or write a path glob")
    return value


def _check_placeholder(value: str | None) -> str | None:
    if value is not None and PROMPT_PLACEHOLDER not in value:
        raise ValueError(
            f"agent command has no {PROMPT_PLACEHOLDER} placeholder: the agent would never "
            f"see the prompt; fix: put {PROMPT_PLACEHOLDER} where the prompt file's path goes"
        )
    return value


class Profile(Strict):
    """An agent (and prompt prefix, declared cost) for the missions ``match`` selects."""

    name: str = Field(min_length=1)
    agent: str | None = None
    runtime: str | None = None
    prompt_prefix: str | None = None
    cost_per_run_hint: float | None = Field(default=None, ge=0)
    match: dict[str, str] | None = None

    _blanks = field_validator("agent", "runtime")(_blank_is_none)

    @field_validator("agent")
    @classmethod
    def _agent_sees_the_prompt(cls, value: str | None) -> str | None:
        return _check_placeholder(value)

    @model_validator(mode="after")
    def _one_agent(self) -> Profile:
        if self.agent is not None and self.runtime is not None:
            raise ValueError(
                f"profile {self.name!r} sets both 'agent' and 'runtime'; fix: keep one of them"
            )
        return self


class HarnessConfig(Strict):
    harness_version: Literal[1] = 1
    agent: str | None = None
    runtime: str | None = None
    test_cmd: str | None = None
    max_attempts: int = Field(default=3, ge=1)
    timeout_s: float | None = Field(default=None, gt=0)
    # How agents run: under bubblewrap (bwrap), unconfined (none), or bwrap when it works
    # here and otherwise unconfined, said in every result (auto). --isolation overrides.
    isolation: Literal["auto", "bwrap", "none"] = "auto"
    # Paths outside the sandbox the agent may write (absolute; its CLI's state, say) or must
    # be able to read (a private /tmp hides the rest of /tmp). Never the repository.
    isolation_writable: list[str] = Field(default_factory=list)
    # Every test that passed at the base commit must still pass (docs/harness.md); off only
    # for suites that cannot run twice.
    non_regression: bool = True
    # Test infrastructure the agent may change in every mission (see Mission.judge_allow).
    judge_allow: list[str] = Field(default_factory=list)
    isolation_readable: list[str] = Field(default_factory=list)
    # Variables of the operator's environment every agent receives besides the basics and
    # its manifest's env_pass: names or globs (MY_*); the rest is dropped (docs/adapters.md).
    agent_env: list[str] = Field(default_factory=list)
    # Variables of the operator's environment the gate's checks receive besides the basics
    # (docs/security.md "What the judge's checks see"): names or globs; never secrets.
    check_env: list[str] = Field(default_factory=list)
    prompt_prefix: str | None = None
    prompt_prefix_file: str | None = None
    message_report: str | None = None
    protected_paths: list[str] | None = None
    allow_paths: list[str] = Field(default_factory=list)
    rules_file: str | None = None
    strict_tests: bool = False
    strict_artifacts: bool = False
    budget_seconds: float | None = Field(default=None, gt=0)
    max_requirements: int | None = Field(default=None, ge=1)
    # Money (docs/costs.md): no attempt starts that would take the run past budget_usd;
    # pricing turns the tokens agents report into USD, per model, per million tokens.
    budget_usd: float | None = Field(default=None, gt=0)
    pricing: dict[str, ModelPrice] = Field(default_factory=dict)
    # Runtimes (manifest ids) that take a mission over when its runtime hits a provider's
    # limit, in order (docs/harness.md "Provider limits").
    fallback_runtimes: list[str] = Field(default_factory=list)
    profiles: list[Profile] = Field(default_factory=list)
    # Missions at once (docs/harness.md "Missions in parallel"); an integer, never "2" or 2.5.
    jobs: int = Field(default=1, ge=1, strict=True)
    # Where missions run: this machine, or a Ray cluster (ray_address, else RAY_ADDRESS).
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None

    _blanks = field_validator(
        "test_cmd",
        "agent",
        "runtime",
        "message_report",
        "rules_file",
        "prompt_prefix_file",
        "ray_address",
    )(_blank_is_none)
    _globs = field_validator("protected_paths", "allow_paths")(_check_globs)
    _env_names = field_validator("agent_env", "check_env")(check_env_patterns)

    @field_validator("agent")
    @classmethod
    def _agent_sees_the_prompt(cls, value: str | None) -> str | None:
        return _check_placeholder(value)

    @model_validator(mode="after")
    def _one_agent(self) -> HarnessConfig:
        if self.agent is not None and self.runtime is not None:
            raise ValueError(
                "both 'agent' and 'runtime' are set; fix: keep one of them (an agent command "
                "or an adapter id)"
            )
        return self

    @property
    def protected(self) -> tuple[str, ...]:
        return (
            DEFAULT_PROTECTED_PATHS if self.protected_paths is None else tuple(self.protected_paths)
        )
