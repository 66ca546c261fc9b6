"""Promoting ``harness/<id>``: its commits since the merge-base, squashed into one commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import git
from tests.promote.conftest import BAD, GOOD, PY, Project

AGENT = """\
import pathlib, sys
pathlib.Path("src/calc.py").write_text({text!r})
"""


def harness_run(project: Project, tmp_path: Path, text: str) -> dict[str, object]:
    """A real ``harness run`` of calc with a scripted agent that writes ``text``."""
    project.repo.write("harness.config.yaml", "harness_version: 1\nmax_attempts: 1\n")
    project.repo.commit("harness config")
    script = tmp_path / "agent.py"
    script.write_text(AGENT.format(text=text))
    result = project.repo.uh(
        "harness", "run", "--agent", f"{PY} {script} {{prompt_file}}", "--format", "json"
    )
    assert result.code in (0, 1), result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def hand_made_branch(project: Project, text: str) -> str:
    git(project.root, "switch", "-q", "-c", "harness/calc")
    project.repo.write("src/calc.py", text)
    project.repo.commit("by hand")
    git(project.root, "switch", "-q", "main")
    return git(project.root, "rev-parse", "harness/calc").strip()


def test_promote_a_green_harness_branch(project: Project, tmp_path: Path) -> None:
    ledger = harness_run(project, tmp_path, GOOD)
    [req] = ledger["requirements"]  # type: ignore[misc]
    assert req["outcome"] == "pass"
    base = git(project.root, "rev-parse", "HEAD").strip()
    tip = git(project.root, "rev-parse", "harness/calc").strip()

    # The branch is the one thing to promote (its worktree is not offered apart from it).
    result = project.promote("--approved-by", "Ada")
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("[PROMOTED] calc  branch harness/calc")
    assert git(project.root, "rev-parse", "HEAD~1").strip() == base
    assert git(project.root, "rev-list", "--count", f"{base}..HEAD").strip() == "1"  # squashed
    assert project.changed() == [".harness/missions/calc/mission.yaml", "src/calc.py"]
    assert (project.root / "src/calc.py").read_text() == GOOD
    mission = yaml.safe_load(project.show("HEAD", ".harness/missions/calc/mission.yaml"))
    assert mission["status"] == "done"  # the harness's green commit says so, now on main
    assert git(project.root, "status", "--porcelain", "--untracked-files=all") == ""
    message = git(project.root, "log", "-1", "--format=%B")
    assert message.startswith("promote calc: branch harness/calc\n")
    assert f"Verification: passed (harness run {ledger['run_id']}: the gate passed)" in message
    assert "Approved-by: Ada" in message

    record = project.record()
    assert record["source"] == "branch" and record["branch"] == "harness/calc"
    assert record.get("sandbox_id") is None and record["source_commit"] == tip
    assert record["base_commit"] == base and record["verification_status"] == "passed"
    assert record["verification_run_id"] == ledger["run_id"]
    assert git(project.root, "rev-parse", "harness/calc").strip() == tip  # the branch stays
    # judged again: no test command is configured, and the re-judge says so beside its pass
    unjudged = "every stage passed (tests: no test command configured: nothing to run)"
    assert record["rejudged"] == "passed" and record["rejudge_detail"] == unjudged
    assert "judged again before landing: passed (" in result.stdout
    assert f"): {unjudged}\n" in result.stdout, result.stdout


def test_a_red_harness_branch_needs_force(project: Project, tmp_path: Path) -> None:
    harness_run(project, tmp_path, BAD)
    before = project.picture()
    refused = project.promote("--approved-by", "Ada", "--branch", "harness/calc")
    assert refused.code == 1 and "verification is failed" in refused.stderr
    assert "the gate failed at verify" in refused.stderr
    assert project.picture() == before
    # The failed work is in the parked worktree, not on the branch: nothing to promote there.
    forced = project.promote("--approved-by", "Ada", "--branch", "harness/calc", "--force")
    assert forced.code == 1 and "changes nothing" in forced.stderr
    # The parked sandbox itself can be decided on by name.
    [entry] = [s for s in project.layout.root.glob(".harness/sandboxes/sbx-calc-*")]
    rejected = project.promote(
        "--approved-by", "Ada", "--sandbox", entry.name, "--decision", "rejected"
    )
    assert rejected.code == 0, rejected.stderr
    assert project.record()["changes"] == ["src/calc.py"]


def test_a_branch_no_harness_run_judged_is_unverified(project: Project) -> None:
    tip = hand_made_branch(project, GOOD)
    before = project.picture()
    refused = project.promote("--approved-by", "Ada", "--branch", "harness/calc")
    assert refused.code == 1
    assert "verification is unverified (no harness run judged harness/calc)" in refused.stderr
    assert project.picture() == before
    data = project.promote_json("--approved-by", "Ada", "--branch", "harness/calc", "--force")
    assert data["forced"] is True and data["source_commit"] == tip
    assert data["changes"] == ["src/calc.py"]


def test_a_branch_changed_after_the_gate_is_stale(project: Project, tmp_path: Path) -> None:
    harness_run(project, tmp_path, GOOD)
    # Someone commits on harness/calc after the green commit (a linked worktree of it).
    worktree = tmp_path / "later"
    git(project.root, "worktree", "add", "-q", str(worktree), "harness/calc")
    (worktree / "src/calc.py").write_text(BAD)
    git(worktree, "commit", "-q", "-am", "after the gate")
    refused = project.promote("--approved-by", "Ada")
    assert refused.code == 1 and "verification is stale" in refused.stderr
    assert "but the branch has commits after it" in refused.stderr


def test_main_moved_on_the_branch_still_applies(project: Project) -> None:
    hand_made_branch(project, GOOD)
    project.repo.write("docs/other.md", "main moved on\n")
    project.repo.commit("main moves on")
    data = project.promote_json("--approved-by", "Ada", "--force")
    assert data["changes"] == ["src/calc.py"]
    assert (project.root / "docs/other.md").exists()
    assert (project.root / "src/calc.py").read_text() == GOOD


def test_a_conflicting_branch_is_refused(project: Project) -> None:
    hand_made_branch(project, GOOD)
    project.repo.write("src/calc.py", "def add(a, b):\n    return sum((a, b))\n")
    project.repo.commit("main implements it too")
    before = project.picture()
    refused = project.promote("--approved-by", "Ada", "--force")
    assert refused.code == 1
    assert "branch harness/calc does not apply cleanly onto main: conflicts in src/calc.py" in (
        refused.stderr
    )
    assert project.picture() == before


@pytest.mark.parametrize(
    ("branch", "code", "says"),
    [
        ("harness/other", 2, "mission 'calc' is promoted from harness/calc"),
        ("main", 2, "mission 'calc' is promoted from harness/calc"),
        ("harness/../x", 2, "invalid branch name"),
        ("harness/calc", 2, "no branch harness/calc"),
    ],
)
def test_bad_branches(project: Project, branch: str, code: int, says: str) -> None:
    result = project.promote("--approved-by", "Ada", "--branch", branch)
    assert result.code == code and says in result.stderr
    assert result.stderr.count("\n") == 1


def test_the_branch_checked_out_in_main_is_refused(project: Project) -> None:
    hand_made_branch(project, GOOD)
    git(project.root, "switch", "-q", "harness/calc")
    result = project.promote("--approved-by", "Ada", "--branch", "harness/calc")
    assert result.code == 2 and "is checked out in the main checkout" in result.stderr
