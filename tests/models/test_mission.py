"""Mission model and its errors: compat files, located problems, one-line CLI errors."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import Repo
from uh_core.errors import ValidationError
from uh_core.missions import read_mission_file
from uh_core.models.base import validate_document
from uh_core.models.mission import Mission
from uh_core.yamldoc import parse_yaml


def _compat_missions(compat: Path) -> list[Path]:
    return sorted(
        p
        for p in compat.rglob("*.yaml")
        if "mission" in str(p)
        and "templates" not in p.parts
        # mission files only: written/ also holds the TS tool's records beside its missions
        and (p.name == "mission.yaml" or p.parent.name == "missions")
    )


def test_every_compat_mission_validates(compat: Path) -> None:
    paths = _compat_missions(compat)
    assert len(paths) >= 6
    for path in paths:
        loaded = read_mission_file(path)
        assert loaded.mission.id == path.parent.name or path.stem == loaded.mission.id


def test_compat_template_is_refused_naming_the_id(compat: Path, repo: Repo) -> None:
    template = compat / "examples" / "missions" / "templates" / "implement-uh-slice.yaml"
    result = repo.uh("mission", "validate", "--file", str(template))
    assert result.code == 2
    assert "<UH-NNN>-implement-slice" in result.stderr
    assert "placeholder" in result.stderr
    assert "Traceback" not in result.stderr


def test_compat_harness_layout_validates_by_id(compat: Path, tmp_path: Path) -> None:
    root = tmp_path / "compat-root"
    shutil.copytree(compat / "harness", root / ".harness")
    repo = Repo(root)
    result = repo.uh("mission", "validate")
    assert result.code == 0, result.stderr
    assert "ok codex-e2e-smoke" in result.stdout
    assert "ok implement-uh-slice-template" in result.stdout


def _problems(text: str) -> list[str]:
    with pytest.raises(ValidationError) as info:
        validate_document(parse_yaml(text), Mission, "m.yaml")
    return info.value.problems


def test_unknown_key_inside_an_ac_is_an_error_with_position_and_suggestion() -> None:
    problems = _problems("id: m\nacceptance_criteria:\n  - id: a\n    chek_command: 'true'\n")
    assert problems == [
        "m.yaml:4:5: acceptance_criteria[0].chek_command: unknown key 'chek_command' "
        "(fix: did you mean 'check_command'?)"
    ]


def test_unknown_key_inside_tdd_is_an_error() -> None:
    (problem,) = _problems("id: m\ntdd:\n  enforce_test_first: true\n")
    assert "tdd.enforce_test_first" in problem and "enforce_tests_first" in problem


def test_duplicate_ac_id() -> None:
    (problem,) = _problems(
        "id: m\nacceptance_criteria:\n  - id: a\n    check_command: 'true'\n  - id: a\n"
    )
    assert "duplicate acceptance criterion id 'a'" in problem


def test_duplicate_yaml_key_is_reported_where_it_stands() -> None:
    problems = _problems("id: m\nstatus: done\nstatus: pending\n")
    assert problems[0].startswith("m.yaml:3:1: status: duplicate key")


@pytest.mark.parametrize("bad", ["../escape", "a/b", "..", "<UH-1>-x", "-lead", ""])
def test_bad_ids_are_refused(bad: str) -> None:
    (problem,) = _problems(f"id: {bad!r}\n")
    assert "id" in problem


def test_bad_severity_names_allowed_values() -> None:
    (problem,) = _problems("id: m\nacceptance_criteria:\n  - id: a\n    severity: fatal\n")
    assert "acceptance_criteria[0].severity" in problem
    assert "'block' or 'warn'" in problem


def test_missing_id() -> None:
    (problem,) = _problems("title: nothing\n")
    assert problem.startswith("m.yaml:1:1: id: required key is missing")


def test_not_a_mapping() -> None:
    (problem,) = _problems("- a\n- b\n")
    assert "document is a list" in problem


def test_legacy_completion_criteria_become_warn_acs_only_without_acs() -> None:
    legacy = Mission(id="m", completion_criteria=["one", "two"])
    assert [(a.id, a.severity, a.check_command) for a in legacy.criteria()] == [
        ("ac-1", "warn", None),
        ("ac-2", "warn", None),
    ]
    both = Mission.model_validate(
        {"id": "m", "completion_criteria": ["x"], "acceptance_criteria": [{"id": "real"}]}
    )
    assert [a.id for a in both.criteria()] == ["real"]


def test_unknown_top_level_keys_are_kept_and_warned(repo: Repo) -> None:
    repo.mission("m", "id: m\nflavour: vanilla\nacceptance_criteria: []\n")
    result = repo.uh("mission", "validate", "m")
    assert result.code == 0
    assert "unknown top-level key 'flavour'" in result.stderr
    assert ":2:1:" in result.stderr


def test_a_misspelt_top_level_key_is_an_error_everywhere(repo: Repo) -> None:
    """``acceptance_criterias:`` dropped every criterion and verify passed on what was left;
    a key one slip from one uh reads now refuses the mission, with the key to use."""
    repo.mission(
        "m",
        "id: m\nacceptance_criterias:\n  - id: a\n    check_command: 'false'\n"
        "verification: {required_checks: [{name: ok, command: 'true'}]}\n",
    )
    for args in (("mission", "validate", "m"), ("verify", "m")):
        result = repo.uh(*args)
        assert result.code == 2, (args, result.stdout)
        assert (
            "mission.yaml:2:1: acceptance_criterias: unknown top-level key "
            "'acceptance_criterias': did you mean 'acceptance_criteria'? "
            "(fix: rename it to acceptance_criteria)"
        ) in result.stderr, result.stderr
        assert "[PASS]" not in result.stdout
    with pytest.raises(ValidationError, match="did you mean 'depends_on'"):
        read_mission_file(repo.mission("n", "id: n\ndepend_on: [m]\n"))


def test_capabilities_as_list_or_map() -> None:
    assert Mission(id="m", capabilities=["a", "b"]).capability_ids == ["a", "b"]
    mapped = Mission.model_validate({"id": "m", "capabilities": {"a": True, "b": False}})
    assert mapped.capability_ids == ["a"]


def test_harness_fields() -> None:
    mission = Mission.model_validate(
        {"id": "m", "status": "done", "depends_on": ["x"], "tests": ["tests/t.py::test_a"]}
    )
    assert mission.status == "done" and mission.depends_on == ["x"]
    (problem,) = _problems("id: m\ndepends_on: ['../x']\n")
    assert "depends_on" in problem
    (problem,) = _problems("id: m\nstatus: finished\n")
    assert "'pending'" in problem
