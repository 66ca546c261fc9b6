"""After a promotion the mission is delivered on main: ``status: done`` in the promotion
commit, the promotion as its latest verdict, and a verify on main judges the promoted change."""

from __future__ import annotations

import json
from typing import Any

import yaml

from tests.conftest import git
from tests.promote.conftest import GOOD, MISSION, Project

TDD = "tdd:\n  test_paths: ['tests/**']\n  source_paths: ['src/**']\n"
TEST = "from src.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
MISSION_FILE = ".harness/missions/calc/mission.yaml"


def _listed(project: Project) -> dict[str, Any]:
    result = project.repo.uh("mission", "list", "--json")
    assert result.code == 0, result.stderr
    [row] = json.loads(result.stdout)["missions"]
    data: dict[str, Any] = row
    return data


def test_a_promoted_sandbox_marks_the_mission_done_and_verifies_on_main(
    project: Project,
) -> None:
    project.repo.mission("calc", MISSION + "status: pending  # set by whoever delivers it\n" + TDD)
    project.repo.commit("tdd")
    entry = project.sandbox({"src/calc.py": GOOD, "tests/test_calc.py": TEST})
    assert project.verify(entry).code == 0
    unchanged = project.repo.uh("verify", "calc")  # main has no change yet: nothing to judge
    assert unchanged.code == 1 and "diff.patch does not exist" in unchanged.stdout
    before = git(project.root, "rev-parse", "HEAD").strip()

    said = project.promote("--approved-by", "ada")
    assert said.code == 0, said.stderr
    assert "mission status: done (in that commit)" in said.stdout
    promoted = project.record()
    # One commit: the sandbox's change and the mission's status, one line changed.
    assert project.changed() == [MISSION_FILE, "src/calc.py", "tests/test_calc.py"]
    assert promoted["changes"] == ["src/calc.py", "tests/test_calc.py"]
    assert promoted["mission_status"] == "done"
    patch = git(project.root, "diff", before, "HEAD", "--", MISSION_FILE)
    assert [
        line for line in patch.splitlines() if line[:1] in "+-" and line[:3] not in "+++---"
    ] == [
        "-status: pending  # set by whoever delivers it",
        "+status: done  # set by whoever delivers it",
    ]
    assert "Mission status: done" in git(project.root, "log", "-1", "--format=%B")
    assert git(project.root, "status", "--porcelain", "--untracked-files=all") == ""

    row = _listed(project)
    assert row["status"] == "done" and row["last_verdict"] == "promoted"
    assert row["promotion"] == {
        "decision": "promoted",
        "at": promoted["promoted_at"],
        "commit": promoted["commit"],
        "verification_status": "passed",
    }
    status = json.loads(project.repo.uh("status", "--json").stdout)
    assert status["missions"][0]["verdict"] == "promoted"  # the dashboard reads the same
    shown = project.repo.uh("status").stdout
    # The failing verify on main is older than the landing: its count says so.
    assert (
        "PROMOTED 0/2 criteria before the promotion (uh-core verify calc checks main now)" in shown
    ), shown
    assert "1 mission · " in shown, shown

    # The mission's diff on main is now the promoted change: the TDD gate passes there.
    verified = project.repo.uh("verify", "calc")
    assert verified.code == 0, verified.stdout
    assert _listed(project)["last_verdict"] == "passed"  # a newer verification wins
    plan = project.repo.uh("harness", "plan")
    assert plan.stdout == "nothing to plan: every mission is done (1 mission)\n"


def test_a_partial_promotion_leaves_the_status(project: Project) -> None:
    entry = project.sandbox({"src/calc.py": GOOD, "docs/notes.md": "more\n"})
    assert project.verify(entry).code == 0
    said = project.promote("--approved-by", "ada", "--change", "src/calc.py")
    assert said.code == 0, said.stderr
    assert "mission status: unchanged (only part of the change was promoted)" in said.stdout
    assert project.record().get("mission_status") is None  # written without nulls
    assert project.changed() == ["src/calc.py"]
    mission = yaml.safe_load(project.show("HEAD", MISSION_FILE))
    assert mission.get("status", "pending") == "pending"
    assert "Mission status" not in git(project.root, "log", "-1", "--format=%B")
    assert _listed(project)["status"] == "pending"


def test_a_rejection_is_not_a_verdict_on_main(project: Project) -> None:
    project.sandbox({"src/calc.py": GOOD})
    project.promote_json("--approved-by", "ada", "--decision", "rejected")
    row = _listed(project)
    assert row["last_verdict"] is None and row["status"] == "pending"
    assert row["promotion"]["decision"] == "rejected"
