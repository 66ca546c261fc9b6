"""What the parser says: a mistyped (sub)command or choice gets the closest one suggested;
``--help`` describes sandboxes as they are; ``tail --json`` prints JSON Lines, as it says."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Repo
from uh_core.cli.main import build_parser, run


def _usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        run(list(argv))
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("argv", "usage", "typo", "suggested"),
    [
        (["verfy"], "uh-core: error:", "verfy", "'verify'"),
        (["harness", "rnu"], "uh-core harness: error:", "rnu", "'run'"),
        (["mission", "rn", "m"], "uh-core mission: error:", "rn", "'run'"),
        (
            ["mission", "run", "m", "--runtime", "r", "--isolation", "bwarp"],
            "mission run",
            "bwarp",
            "'bwrap'",
        ),
    ],
)
def test_a_mistyped_choice_gets_the_closest_one(
    capsys: pytest.CaptureFixture[str], argv: list[str], usage: str, typo: str, suggested: str
) -> None:
    err = _usage_error(capsys, *argv)
    assert usage in err
    assert f"invalid choice: {typo!r}; did you mean {suggested}?" in err
    assert "choose from" in err  # the whole list stays


def test_nothing_close_suggests_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(capsys, "xyzzy")
    assert "invalid choice: 'xyzzy'" in err and "did you mean" not in err


def test_help_calls_sandboxes_repositories_not_worktrees() -> None:
    top = build_parser().format_help()
    assert "git worktree" not in top
    assert "sandboxes (each a repository of its own" in " ".join(top.split())


def test_tail_json_is_json_lines_and_says_so(repo: Repo) -> None:
    repo.mission("m", "id: m\nacceptance_criteria:\n  - id: ok\n    check_command: 'true'\n")
    assert repo.uh("verify", "m").code == 0
    result = repo.uh("tail", "m", "--json")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) >= 2
    events = [json.loads(line) for line in lines]  # each line one document
    assert events[0]["event"] == "verification.started"
    assert events[-1]["event"] == "verification.finished"
    helptext = " ".join(repo.uh("tail", "--help").stdout.split())
    assert "JSON Lines" in helptext and "one JSON document" not in helptext
