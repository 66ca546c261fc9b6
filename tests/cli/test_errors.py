"""Bad input exits 2 with one clear line, never a traceback, and touches nothing."""

from __future__ import annotations

import pytest

from tests.conftest import Repo


def _one_line_error(result_stderr: str) -> str:
    lines = [line for line in result_stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result_stderr
    assert "Traceback" not in result_stderr
    assert lines[0].startswith("uh-core: error: ")
    return lines[0]


def test_malformed_yaml(repo: Repo) -> None:
    repo.mission("m", "id: m\nacceptance_criteria:\n  - id: a\n   check_command: [\n")
    result = repo.uh("verify", "m")
    assert result.code == 2
    line = _one_line_error(result.stderr)
    assert ".harness/missions/m/mission.yaml:" in line and "YAML syntax error" in line


def test_unknown_key_inside_an_ac(repo: Repo) -> None:
    repo.mission("m", "id: m\nacceptance_criteria:\n  - id: a\n    command: 'true'\n")
    result = repo.uh("verify", "m")
    assert result.code == 2
    line = _one_line_error(result.stderr)
    assert "mission.yaml:4:5: acceptance_criteria[0].command: unknown key 'command'" in line
    assert "check_command" in line
    assert not (repo.root / ".harness/missions/m/events.ndjson").exists()


def test_duplicate_ac_id(repo: Repo) -> None:
    repo.mission(
        "m",
        "id: m\nacceptance_criteria:\n  - id: a\n    check_command: 'true'\n"
        "  - id: a\n    check_command: 'true'\n",
    )
    result = repo.uh("verify", "m")
    assert result.code == 2
    assert "duplicate acceptance criterion id 'a'" in _one_line_error(result.stderr)


@pytest.mark.parametrize("bad", ["..", "../../etc", "a/../../b", "x/y", "<UH-1>-slice"])
def test_path_tricks_in_ids_are_refused_before_touching_files(repo: Repo, bad: str) -> None:
    before = sorted(p.relative_to(repo.root) for p in repo.root.rglob("*"))
    for args in (("verify", bad), ("tail", bad), ("mission", "validate", bad)):
        result = repo.uh(*args)
        assert result.code == 2, (args, result)
        line = _one_line_error(result.stderr)
        assert "invalid mission id" in line and repr(bad) in line
    assert sorted(p.relative_to(repo.root) for p in repo.root.rglob("*")) == before


def test_unknown_mission_names_known_ones(repo: Repo) -> None:
    repo.mission("real", "id: real\n")
    result = repo.uh("verify", "nope")
    assert result.code == 2
    line = _one_line_error(result.stderr)
    assert "unknown mission 'nope'" in line and "real" in line


def test_id_must_match_directory(repo: Repo) -> None:
    repo.mission("dir-name", "id: other-name\n")
    result = repo.uh("verify", "dir-name")
    assert result.code == 2
    assert "does not match its directory" in _one_line_error(result.stderr)


def test_validate_reports_every_problem_one_line_each(repo: Repo) -> None:
    repo.mission(
        "m",
        "id: m\nstatus: nope\nacceptance_criteria:\n  - id: a\n    severity: fatal\n    x: 1\n",
    )
    result = repo.uh("mission", "validate", "m")
    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 3
    assert all(
        line.startswith("uh-core: error: .harness/missions/m/mission.yaml:") for line in lines
    )


def test_bad_flags(repo: Repo) -> None:
    repo.mission("m", "id: m\n")
    for args in (("verify", "m", "--repeat", "0"), ("verify", "m", "--timeout", "-1")):
        result = repo.uh(*args)
        assert result.code == 2
        assert "Traceback" not in result.stderr


def test_not_utf8_mission(repo: Repo) -> None:
    path = repo.root / ".harness/missions/m/mission.yaml"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"id: m\ntitle: \xff\xfe\n")
    result = repo.uh("verify", "m")
    assert result.code == 2
    assert "not UTF-8" in _one_line_error(result.stderr)


def test_root_that_does_not_exist(repo: Repo) -> None:
    result = repo.uh_raw("mission", "list", "--root", str(repo.root / "missing"))
    assert result.code == 2
    assert "no such directory" in _one_line_error(result.stderr)


def test_root_without_harness(repo: Repo, tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = repo.uh_raw("mission", "list", "--root", str(empty))
    assert result.code == 2
    assert "uh-core init" in _one_line_error(result.stderr)


@pytest.mark.parametrize(
    ("args", "prog", "extra"),
    [
        (("harness", "run", "--agnet", "x"), "uh-core harness run", "--agnet x"),
        (("mission", "list", "--jsn"), "uh-core mission list", "--jsn"),
        (("verify", "m", "extra-arg"), "uh-core verify", "extra-arg"),
    ],
)
def test_a_mistyped_flag_shows_the_subcommands_usage(
    repo: Repo, args: tuple[str, ...], prog: str, extra: str
) -> None:
    result = repo.uh_raw(*args)
    assert result.code == 2
    assert result.stderr.startswith(f"usage: {prog} "), result.stderr
    assert "COMMAND ..." not in result.stderr  # not the top-level usage
    assert result.stderr.splitlines()[-1] == f"{prog}: error: unrecognized arguments: {extra}"
