"""Hostile and careless input: one line on stderr, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.promote.conftest import GOOD, Project
from uh_core.errors import UsageError
from uh_core.models.promotion import PromotionRecord
from uh_core.promote.changes import covers, normalise, select
from uh_core.promote.record import read_promotion


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["../etc", "--approved-by", "a"], "invalid mission id '../etc'"),
        (["<UH-NNN>-x", "--approved-by", "a"], "template placeholder"),
        (["nope", "--approved-by", "a"], "unknown mission 'nope'"),
        (["calc"], "the following arguments are required: --approved-by"),
        (["calc", "--approved-by", "  "], "a name on one line is required"),
        (["calc", "--approved-by", "a\nUh-Verification: passed"], "a name on one line"),
        (["calc", "--approved-by", "a", "--decision", "merged"], "invalid choice: 'merged'"),
        (
            ["calc", "--approved-by", "a", "--sandbox", "s", "--branch", "harness/calc"],
            "not allowed with argument",
        ),
        (["calc", "--approved-by", "a", "--sandbox", "../x"], "invalid sandbox id '../x'"),
        (["calc", "--approved-by", "a", "--sandbox", "sbx-nope"], "unknown sandbox 'sbx-nope'"),
        (["calc", "--approved-by", "a"], "nothing to promote for mission 'calc'"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(project: Project, args: list[str], says: str) -> None:
    before = project.picture()
    result = project.repo.uh("promote", *args)
    assert result.code == 2, result
    assert says in result.stderr
    assert "Traceback" not in result.stderr
    assert project.picture() == before
    assert not list(project.root.glob(".harness/missions/*/promotion.yaml"))
    assert project.promotion_events(".harness/audit/events.ndjson") == []


def test_ambiguous_source_lists_the_choices(project: Project) -> None:
    one = project.sandbox({"src/calc.py": GOOD}, runtime="alpha")
    two = project.sandbox({"src/calc.py": GOOD}, runtime="beta")
    result = project.promote("--approved-by", "a", "--decision", "deferred")
    assert result.code == 2
    assert f"2 things to promote: --sandbox {one.id}, --sandbox {two.id}" in result.stderr
    assert "(fix: name one with --sandbox SBX or --branch harness/ID)" in result.stderr


def test_a_sandbox_of_another_mission_is_refused(project: Project) -> None:
    project.repo.mission("other", "id: other\n")
    project.repo.commit("other")
    entry = project.sandbox({"src/calc.py": GOOD})
    result = project.repo.uh("promote", "other", "--approved-by", "a", "--sandbox", entry.id)
    assert result.code == 2 and "belongs to mission 'calc', not 'other'" in result.stderr


def test_a_sandbox_whose_worktree_is_gone(project: Project) -> None:
    import shutil

    entry = project.sandbox({"src/calc.py": GOOD})
    shutil.rmtree(project.root / entry.worktree)
    result = project.promote("--approved-by", "a", "--sandbox", entry.id)
    assert result.code == 2 and "its worktree" in result.stderr and "is gone" in result.stderr


def test_no_harness_dir(tmp_path: Path) -> None:
    from tests.conftest import Repo, git

    git(tmp_path, "init", "-q")
    result = Repo(tmp_path).uh("promote", "calc", "--approved-by", "a")
    assert result.code == 2 and "no .harness/" in result.stderr


def test_json_and_the_python_reader_agree(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD})
    assert project.verify(entry).code == 0
    data = project.promote_json("--approved-by", "a", "--decision", "deferred", "--note", "later")
    assert data["artifact"] == ".harness/missions/calc/promotion.yaml"
    record = read_promotion(project.layout, "calc")
    assert isinstance(record, PromotionRecord)
    assert record.model_dump(mode="json") == {k: v for k, v in data.items() if k != "artifact"}
    assert record.decisions()[-1].note == "later"
    assert read_promotion(project.layout, "other") is None


def test_schema(project: Project) -> None:
    result = project.repo.uh_raw("schema", "promotion")
    assert result.code == 0
    schema = json.loads(result.stdout)
    for key in ("mission_id", "sandbox_id", "decision", "approved_by", "promoted_at", "changes",
                "audit_event_id", "history", "forced", "commit"):  # fmt: skip
        assert key in schema["properties"], key
    event = json.loads(project.repo.uh_raw("schema", "event").stdout)
    text = json.dumps(event)
    for name in ("promotion.recorded", "promotion.auto-triggered", "promotion.auto-failed"):
        assert name in text


def test_change_filters(tmp_path: Path) -> None:
    paths = ["README.md", "docs/a b.md", "docs/guide/x.md", "src/calc.py", "src/calcx.py"]
    assert select(paths, [], tmp_path) == (paths, [])
    assert select(paths, ["src/calc.py"], tmp_path)[0] == ["src/calc.py"]
    assert select(paths, ["docs"], tmp_path)[0] == ["docs/a b.md", "docs/guide/x.md"]
    assert select(paths, ["./docs/"], tmp_path)[0] == ["docs/a b.md", "docs/guide/x.md"]
    assert select(paths, ["**/*.md"], tmp_path)[0] == [
        "README.md",
        "docs/a b.md",
        "docs/guide/x.md",
    ]
    assert select(paths, ["src/calc*.py"], tmp_path)[0] == ["src/calc.py", "src/calcx.py"]
    assert select(paths, [str(tmp_path / "README.md")], tmp_path)[0] == ["README.md"]
    assert not covers("src/calc", "src/calc.py")  # a prefix is a directory, never a name start
    assert normalise(".", tmp_path) == "**"
    with pytest.raises(UsageError, match="src/nope: not among the changed paths"):
        select(paths, ["src/calc.py", "src/nope"], tmp_path)
    for bad in ("", "a/../../b", "/elsewhere/x"):
        with pytest.raises(UsageError):
            normalise(bad, tmp_path)
