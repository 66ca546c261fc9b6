"""uh.mission.v0: a superset of what the TypeScript uh reads (contract §3)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from uh_core.ids import slug_problem
from uh_core.models.base import Open, Strict
from uh_core.models.degraded import Degraded

MISSION_SCHEMA = "uh.mission.v0"

# Top-level keys the TypeScript uh knows besides the ones modelled below: kept, never warned.
KNOWN_PASSTHROUGH = frozenset(
    {
        "issues",
        "issue_refs",
        "skills",
        "shape",
        "team",
        "integration_report_path",
        "priority",
        "runtime_requirements",
        "runtime_config_overrides",
        "workflow_profile",
        "source_links",
    }
)

Severity = Literal["block", "warn"]
MissionStatus = Literal["pending", "done", "deprecated", "needs-clarification"]


def _slug(value: str) -> str:
    problem = slug_problem(value)
    if problem:
        raise ValueError(f"id {value!r} {problem}; fix: use letters, digits, '.', '_' and '-' only")
    return value


def _runnable(value: str | None) -> str | None:
    """A command the engine can start: no NUL byte (no process can take one in its argv)."""
    if value is not None and "\x00" in value:
        raise ValueError(
            f"contains a NUL byte at character {value.index(chr(0))}: no command can carry one"
        )
    return value


class CheckNeeds(Strict):
    """What a criterion's check needs beyond the gate's confinement, said in the mission and
    recorded with its result: the network, or variables of the operator's environment."""

    network: bool = False
    env: list[str] = Field(default_factory=list)


class AcceptanceCriterion(Strict):
    id: str
    description: str = ""
    check_command: str | None = None
    severity: Severity = "block"
    timeout_s: float | None = Field(default=None, gt=0)
    degraded: Degraded | None = None  # the intended evidence forfeited, and its substitute
    needs: CheckNeeds | None = None  # beyond the gate's confinement (docs/security.md)

    _check_id = field_validator("id")(_slug)

    @field_validator("check_command")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return _runnable(value) if value and value.strip() else None


class TddPolicy(Strict):
    enforce_tests_first: bool = True
    test_paths: list[str] = Field(default_factory=list)
    source_paths: list[str] = Field(default_factory=list)


class RequiredCheck(Strict):
    name: str
    command: str | None = None
    description: str = ""
    timeout_s: float | None = Field(default=None, gt=0)

    _runnable = field_validator("command")(lambda value: _runnable(value))


class Verification(Open):
    required_checks: list[RequiredCheck] = Field(default_factory=list)
    # TypeScript uh: free-text checks a person confirms; recorded as manual, never run.
    checks: list[str | RequiredCheck] = Field(default_factory=list)
    max_iterations: int | None = None
    review_gates: list[str] = Field(default_factory=list)


class ExpectedOutputs(Open):
    files: list[str] = Field(default_factory=list)


class ExpectedArtifact(Open):
    path: str
    type: str | None = None


class SandboxSpec(Open):
    backend: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    promotion_policy: str | None = None


class Mission(Open):
    schema_version: Literal["uh.mission.v0"] = "uh.mission.v0"
    id: str
    title: str | None = None
    name: str | None = None
    objective: str | None = None
    description: str | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    read_first: list[str] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)
    expected_outputs: ExpectedOutputs = Field(default_factory=ExpectedOutputs)
    expected_artifacts: list[ExpectedArtifact] = Field(default_factory=list)
    completion_criteria: list[str] = Field(default_factory=list)
    acceptance_criteria: list[AcceptanceCriterion] = Field(default_factory=list)
    tdd: TddPolicy | None = None
    capabilities: list[str] | dict[str, bool] = Field(default_factory=list)
    verification: Verification = Field(default_factory=Verification)
    sandbox: SandboxSpec = Field(default_factory=SandboxSpec)
    # Harness fields (this project).
    status: MissionStatus = "pending"
    depends_on: list[str] = Field(default_factory=list)
    bounded_context: str | None = None
    category: str | None = None
    requirement: str | None = None
    feature: str | None = None
    tests: list[str] = Field(default_factory=list)
    # Tests that passed at the base commit and that this mission retires on purpose (by id,
    # as the report names them: "tests.test_calc.test_old" or "tests/test_calc.py::test_old");
    # every other such test must still be collected and pass (suite non-regression).
    retire_tests: list[str] = Field(default_factory=list)
    # A required test (``tests:``) that already passes at the base commit proves nothing about
    # the change, and blocks the green (judge/failtopass.py); true accepts it (recorded).
    allow_passing_at_base: bool = False
    # Test infrastructure (conftest.py, pytest.ini, tox.ini, the test-runner sections of
    # setup.cfg and pyproject.toml, sitecustomize/usercustomize, *.pth) the agent may change:
    # globs. Everything else of it is part of the judge.
    judge_allow: list[str] = Field(default_factory=list)
    # The most this mission may cost (docs/costs.md): no attempt starts that would pass it.
    budget_usd: float | None = Field(default=None, gt=0)

    _check_id = field_validator("id")(_slug)

    @field_validator("depends_on")
    @classmethod
    def _check_deps(cls, value: list[str]) -> list[str]:
        for dep in value:
            _slug(dep)
        return value

    @model_validator(mode="after")
    def _unique_ac_ids(self) -> Mission:
        seen: set[str] = set()
        for ac in self.acceptance_criteria:
            if ac.id in seen:
                raise ValueError(f"duplicate acceptance criterion id {ac.id!r}")
            seen.add(ac.id)
        return self

    @property
    def display_title(self) -> str:
        return self.title or self.name or self.id

    @property
    def display_objective(self) -> str:
        return (self.objective or self.description or "").strip()

    @property
    def capability_ids(self) -> list[str]:
        if isinstance(self.capabilities, dict):
            return [key for key, on in self.capabilities.items() if on]
        return list(self.capabilities)

    def unknown_keys(self) -> list[str]:
        extra = self.model_extra or {}
        return [key for key in extra if key not in KNOWN_PASSTHROUGH]

    def criteria(self) -> list[AcceptanceCriterion]:
        """Declared ACs; legacy completion_criteria become warn ACs only when there are none."""
        if self.acceptance_criteria:
            return list(self.acceptance_criteria)
        return [
            AcceptanceCriterion(id=f"ac-{n}", description=text, severity="warn")
            for n, text in enumerate(self.completion_criteria, start=1)
        ]

    def expected_files(self) -> list[str]:
        return [*self.expected_outputs.files, *(a.path for a in self.expected_artifacts)]
