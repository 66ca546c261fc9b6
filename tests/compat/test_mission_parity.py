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
