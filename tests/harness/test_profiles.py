"""Profiles: first match wins, ``*``, unknown keys, name-only profiles, the run's default."""

from __future__ import annotations

import pytest

from tests.harness.conftest import Project, write_config
from uh_core.errors import UsageError
from uh_core.harness.profiles import by_name, choose
from uh_core.models.harness_config import Profile
from uh_core.models.mission import Mission

PROFILES = [
    Profile(name="billing", agent="a {prompt_file}", match={"bounded_context": "billing"}),
    Profile(name="any-category", runtime="r", match={"category": "*"}),
    Profile(name="odd", agent="c {prompt_file}", match={"colour": "red"}),
    Profile(name="by-name-only", agent="d {prompt_file}"),
    Profile(
        name="both",
        agent="e {prompt_file}",
        match={"bounded_context": "shop", "feature": "cart"},
    ),
]


def _pick(**fields: str) -> str | None:
    found = choose(PROFILES, Mission(id="m", **fields))
    return found.name if found is not None else None


def test_first_matching_profile_wins() -> None:
    assert _pick(bounded_context="billing", category="x") == "billing"
    assert _pick(bounded_context="shop", category="x") == "any-category"


def test_star_matches_any_value_that_is_set() -> None:
    assert _pick(category="anything") == "any-category"
    assert _pick(requirement="r-1") is None


def test_unknown_key_and_name_only_profiles_never_match() -> None:
    # "odd" matches on an unknown key; "by-name-only" has no match: neither is ever chosen.
    assert _pick() is None
    assert _pick(bounded_context="shop") is None  # "both" needs feature: cart as well
    assert _pick(bounded_context="shop", feature="cart") == "both"


def test_profile_by_name() -> None:
    found = choose(PROFILES, Mission(id="m", bounded_context="billing"), "by-name-only")
    assert found is not None and found.name == "by-name-only"
    with pytest.raises(UsageError, match="no such profile"):
        by_name(PROFILES, "nope")


def test_a_profile_without_the_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match="placeholder"):
        Profile(name="x", agent="no-placeholder")


def test_profiles_choose_the_agent_and_prefix_and_attempts_record_them(project: Project) -> None:
    project.repo.mission(
        "other",
        "id: other\nbounded_context: billing\nacceptance_criteria:\n"
        "  - id: made\n    check_command: test -f out/other.txt\n",
    )
    default = project.agent(
        "default", 'write("src/calc.py", GOOD)\nassert "BILLING TEAM" not in prompt\n'
    )
    billing = project.agent(
        "billing",
        'assert prompt.startswith("BILLING TEAM")\nwrite("out/other.txt", "x")\nwrite("src/calc.py", GOOD)\n',
    )
    write_config(
        project.repo,
        f"""\
        profiles:
          - name: billing
            agent: {billing}
            prompt_prefix: BILLING TEAM
            cost_per_run_hint: 0.25
            match: {{bounded_context: billing}}
        """,
    )
    project.repo.write(
        ".harness/profiles.yaml",
        f"profiles:\n  - name: manual\n    agent: {default}\n",
    )
    project.repo.commit("profiles")
    before = project.snapshot()
    result, data = project.run_json("--agent", default)
    assert result.code == 0, result.stderr
    assert project.snapshot() == before
    by_id = {r["mission_id"]: r for r in data["requirements"]}
    assert by_id["other"]["profile"] == "billing"
    assert by_id["other"]["attempts"][0]["profile"] == "billing"
    assert by_id["other"]["attempts"][0]["cost_per_run_hint"] == 0.25
    assert by_id["calc"]["profile"] is None and by_id["calc"]["attempts"][0]["profile"] is None
    events = project.events(".harness/missions/other/events.ndjson")
    started = [e for e in events if e["event"] == "harness.attempt.started"]
    assert [e["profile"] for e in started] == ["billing"]
    # `harness prompt` shows the prompt the profile sends.
    printed = project.repo.uh("harness", "prompt", "other").stdout
    assert printed.startswith("BILLING TEAM\n\n---\n\n# Implement other")
    # --profile picks a name-only profile from .harness/profiles.yaml for every mission.
    named, data = project.run_json("--profile", "manual", "--req", "calc", "--force")
    assert named.code == 0, named.stderr
    assert data["requirements"][0]["profile"] == "manual"
    unknown = project.run("--agent", default, "--profile", "nope")
    assert unknown.code == 2 and "no such profile" in unknown.stderr
