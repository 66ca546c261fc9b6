"""Every mission the TypeScript uh rejects is a warning here naming what it would say;
``mission validate --strict`` makes those errors."""

from __future__ import annotations

import pytest

from tests.compat.conftest import TS_UH
from tests.conftest import Repo
from uh_core.compat.mission_rules import ts_problems

BASE = {
    "schema_version": "uh.mission.v0",
    "id": "m",
    "title": "T",
    "workflow_profile": "staged",
}
TEAM = {"workers": [{"adapter": "hermes", "role": "dev"}], "leader": {"adapter": "codex"}}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"title": None}, "a name or a title"),
        ({"workflow_profile": None}, "workflow_profile is required"),
        ({"team": "hermes"}, "team must be an object"),
        ({"team": {"workers": [], "leader": {"adapter": "codex"}}}, "non-empty list"),
        ({"team": {"workers": [{"adapter": "hermes"}], "leader": {"adapter": "codex"}}}, "role"),
        ({"team": {**TEAM, "extra": 1}}, "unrecognized key 'extra'"),
        ({"team": {"workers": TEAM["workers"]}}, "team.leader is required"),
        ({"team": {**TEAM, "leader": {"adapter": "gpt"}}}, "adapter must be one of"),
        (
            {"team": {**TEAM, "workers": [{"adapter": "pi", "role": "r", "count": 0}]}},
            "count must be a positive",
        ),
        # mission-T9: a team mission without its team block
        ({"shape": "team"}, "shape: team requires team.workers and team.leader"),
        ({"shape": "squad"}, "shape must be single or team"),
        # mission-T12: two workers with one role
        (
            {
                "shape": "team",
                "team": {
                    "workers": [
                        {"adapter": "codex", "role": "shared"},
                        {"adapter": "oh-my-pi", "role": "shared"},
                    ],
                    "leader": {"adapter": "hermes"},
                },
            },
            "Duplicate team.workers[].role: shared",
        ),
        ({"verification": {"max_iterations": 0}}, "max_iterations must be a positive"),
        ({"design_path": ""}, "design_path must be a non-empty string"),
        ({"capabilities": ["read files"]}, "capability 'read files'"),
        ({"objective": None}, "objective must be a string"),
        ({"runtime_requirements": {"gpu": True}}, "unrecognized key 'gpu'"),
        ({"runtime_requirements": {"min_context_tokens": 0}}, "positive integer"),
        ({"acceptance_criteria": [{"id": "a", "check_command": "true"}]}, "needs a description"),
        ({"schema_version": None}, "schema_version is required"),
    ],
)
def test_each_ts_rule(change: dict[str, object], said: str) -> None:
    data = {**BASE, **change}
    data = {k: v for k, v in data.items() if v is not None or k == "objective"}
    found = [what for _loc, what, _fix in ts_problems(data)]
    assert any(said in what for what in found), found


def test_a_mission_the_ts_tool_accepts_has_none() -> None:
    assert ts_problems({**BASE, "team": TEAM, "capabilities": ["a:b", "c-d"]}) == []
    # the TS tool's own valid team mission (tests/team-schema.test.ts): two roles, count 2
    team = {
        "workers": [
            {"adapter": "codex", "role": "frontend"},
            {"adapter": "oh-my-pi", "role": "backend", "count": 2},
        ],
        "leader": {"adapter": "hermes", "role": "integrator"},
    }
    extra = {"integration_report_path": "integration-report.md"}
    assert ts_problems({**BASE, "shape": "team", "team": team, **extra}) == []
    assert ts_problems({**BASE, "shape": "single", "verification": {"max_iterations": 2}}) == []


def test_the_team_rules_warn_located_and_strict_refuses(repo: Repo) -> None:
    """mission-T9 and mission-T12 through the command: a located warning each, exit 2 under
    --strict naming the rule."""
    head = "schema_version: uh.mission.v0\nid: m\ntitle: M\nworkflow_profile: staged\n"
    criteria = "acceptance_criteria:\n  - {id: a, description: d, check_command: 'true'}\n"
    repo.mission("m", head + "shape: team\n" + criteria)
    loose = repo.uh("mission", "validate", "m")
    assert loose.code == 0, loose.stderr
    assert "mission.yaml:5:1: shape: the TypeScript uh rejects this: shape: team requires" in (
        loose.stderr
    )
    team = (
        "team:\n  workers:\n    - {adapter: codex, role: shared}\n"
        "    - {adapter: pi, role: shared}\n  leader: {adapter: hermes}\n"
    )
    repo.mission("m", head + "shape: team\n" + team + criteria)
    strict = repo.uh("mission", "validate", "m", "--strict")
    assert strict.code == 2
    assert "Duplicate team.workers[].role: shared" in strict.stderr
    assert "mission.yaml:9:" in strict.stderr, strict.stderr  # the second worker's role


def test_validate_warns_and_strict_refuses(repo: Repo) -> None:
    repo.mission(
        "m",
        "id: m\ntitle: M\ncapabilities: [read files]\nacceptance_criteria:\n"
        "  - {id: a, check_command: 'true'}\n",
    )
    loose = repo.uh("mission", "validate", "m")
    assert loose.code == 0, loose.stderr
    assert "the TypeScript uh rejects this: workflow_profile is required" in loose.stderr
    assert "capability 'read files'" in loose.stderr
    assert "mission.yaml:5:" in loose.stderr  # located like every problem
    strict = repo.uh("mission", "validate", "m", "--strict")
    assert strict.code == 2
    assert "uh-core: error:" in strict.stderr and "workflow_profile" in strict.stderr


def test_the_ts_tools_own_missions_raise_nothing(repo: Repo) -> None:
    for path in sorted((TS_UH / "written" / "missions").glob("*/mission.yaml")):
        result = repo.uh("mission", "validate", "--file", str(path), "--strict")
        assert result.code == 0, result.stderr
        assert "TypeScript" not in result.stderr
