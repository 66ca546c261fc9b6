"""Readiness: ``harness plan`` and how ``harness run`` treats blocked missions."""

from __future__ import annotations

import json
from typing import Any

import yaml

from tests.conftest import Repo, git
from tests.harness.conftest import PY, Project, write_config

AC = f'acceptance_criteria:\n  - id: ok\n    check_command: {PY} -c "pass"\n'


def _plan(repo: Repo, *args: str) -> dict[str, Any]:
    result = repo.uh("harness", "plan", "--format", "json", *args)
    assert result.code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _codes(data: dict[str, Any]) -> dict[str, list[str]]:
    return {m["mission_id"]: [b["code"] for b in m["blockers"]] for m in data["missions"]}


def test_plan_reports_every_blocker_code(repo: Repo) -> None:
    repo.mission("base", f"id: base\n{AC}")
    repo.mission("after", f"id: after\ndepends_on: [base, ghost]\n{AC}")
    repo.mission("cyc-a", f"id: cyc-a\ndepends_on: [cyc-b]\n{AC}")
    repo.mission("cyc-b", f"id: cyc-b\ndepends_on: [cyc-c]\n{AC}")
    repo.mission("cyc-c", f"id: cyc-c\ndepends_on: [cyc-a]\n{AC}")
    repo.mission("self", f"id: self\ndepends_on: [self]\n{AC}")
    repo.mission("downstream", f"id: downstream\ndepends_on: [mid]\n{AC}")
    repo.mission("mid", f"id: mid\ndepends_on: [cyc-b]\n{AC}")
    repo.mission("old", f"id: old\nstatus: deprecated\n{AC}")
    repo.mission("vague", f"id: vague\nstatus: needs-clarification\n{AC}")
    repo.mission("hollow", "id: hollow\nacceptance_criteria:\n  - id: a\n    description: x\n")
    repo.mission(
        "warned",
        f"id: warned\nacceptance_criteria:\n  - id: a\n    check_command: {PY} -c pass\n"
        "    severity: warn\n",
    )
    repo.mission("taken", f"id: taken\n{AC}")
    repo.mission("tdd", "id: tdd\ntdd:\n  enforce_tests_first: true\n")
    repo.mission("finished", f"id: finished\nstatus: done\n{AC}")
    repo.commit("missions")
    git(repo.root, "branch", "harness/taken")
    before = git(repo.root, "status", "--porcelain", "--untracked-files=all")
    data = _plan(repo)
    codes = _codes(data)
    assert "finished" not in codes
    assert codes["base"] == [] and codes["tdd"] == []
    assert codes["after"] == ["dependency_not_done", "dependency_not_done"]
    # Every member of the cycle and every dependent, direct or not, is reported.
    for member in ("cyc-a", "cyc-b", "cyc-c", "self"):
        assert "dependency_cycle" in codes[member], member
    assert codes["mid"][0] == "dependency_cycle"
    assert codes["downstream"][0] == "dependency_cycle"
    assert codes["old"] == ["deprecated"] and codes["vague"] == ["needs_clarification"]
    assert codes["hollow"] == ["nothing_can_fail"] and codes["warned"] == ["nothing_can_fail"]
    assert codes["taken"] == ["branch_exists"]
    for mission in data["missions"]:
        assert mission["ready"] is (not mission["blockers"])
        for blocker in mission["blockers"]:
            assert blocker["message"] and blocker["fix"]
    # Pending ones in run order; the deprecated and unclear ones after them.
    order = [m["mission_id"] for m in data["missions"]]
    assert order.index("base") < order.index("after")
    assert order[-2:] == ["old", "vague"]
    # A test command makes the hollow mission judgeable; --force frees the taken branch.
    assert _codes(_plan(repo, "--test-cmd", "true"))["hollow"] == []
    assert _codes(_plan(repo, "--force"))["taken"] == []
    text = repo.uh("harness", "plan")
    assert text.code == 0
    assert "[BLOCKED] hollow" in text.stdout and "[READY  ] base" in text.stdout
    assert "fix: " in text.stdout
    assert git(repo.root, "status", "--porcelain", "--untracked-files=all") == before
    assert "harness/base" not in git(repo.root, "branch", "--list")


def _two_missions(project: Project) -> str:
    project.repo.mission(
        "later",
        "id: later\ndepends_on: [calc]\nacceptance_criteria:\n"
        "  - id: made\n    check_command: test -f out/later.txt\n",
    )
    project.repo.commit("later")
    return project.agent(
        "both", 'write("src/calc.py", GOOD)\nwrite(f"out/{os.environ[\'MISSION_ID\']}.txt", "x")\n'
    )


def test_skip_not_ready_passes_over_blocked_missions(project: Project) -> None:
    agent = _two_missions(project)
    before = project.snapshot()
    result, data = project.run_json("--agent", agent, "--skip-not-ready")
    assert project.snapshot() == before
    outcomes = {r["mission_id"]: (r["outcome"], r["skip_code"]) for r in data["requirements"]}
    assert outcomes == {"calc": ("pass", None), "later": ("skipped", "dependency_not_done")}
    assert result.code == 1  # a mission did not pass
    later = data["requirements"][1]
    assert later["reason"].startswith("not ready: later depends on calc")
    assert "harness/later" not in git(project.root, "branch", "--list")


def test_not_ready_missions_run_with_a_warning(project: Project) -> None:
    agent = _two_missions(project)
    result, data = project.run_json("--agent", agent)
    assert result.code == 0, result.stderr
    later = data["requirements"][1]
    assert later["outcome"] == "pass"
    assert later["warnings"] == [
        "dependency_not_done: later depends on calc, whose status is pending"
    ]
    assert "later: warning: not ready: dependency_not_done" in result.stderr
    text = project.run("--agent", agent, "--force")
    assert "warning: ran although not ready: dependency_not_done" in text.stdout


def test_nothing_can_fail_is_always_skipped_before_any_worktree(project: Project) -> None:
    project.repo.mission("hollow", "id: hollow\nobjective: anything goes\n")
    write_config(project.repo, test_cmd=None)
    project.repo.commit("hollow")
    before = project.snapshot()
    agent = project.agent("good", 'write("src/calc.py", GOOD)\n')
    result, data = project.run_json("--agent", agent)
    assert project.snapshot() == before
    outcomes = {r["mission_id"]: (r["outcome"], r["skip_code"]) for r in data["requirements"]}
    # calc ran (its required tests cannot run without a test command: it fails, elsewhere)
    assert outcomes["hollow"] == ("skipped", "nothing_can_fail") and outcomes["calc"][1] is None
    assert result.code == 1
    assert "harness/hollow" not in git(project.root, "branch", "--list")
    index = yaml.safe_load((project.root / ".harness/sandboxes/index.yaml").read_text())
    assert [s["mission_id"] for s in index["sandboxes"]] == ["calc"]
    audit = project.events(".harness/audit/events.ndjson")
    skipped = [e for e in audit if e["event"] == "harness.requirement.skipped"]
    assert [(e["mission_id"], e["code"]) for e in skipped] == [("hollow", "nothing_can_fail")]


def test_plan_without_missions_says_so_and_how_to_add_one(repo: Repo) -> None:
    result = repo.uh("harness", "plan")
    assert result.code == 0, result.stderr
    assert "every mission is done" not in result.stdout
    assert result.stdout.startswith("no missions yet: .harness/missions/ holds none")
    assert ".harness/missions/<id>/mission.yaml" in result.stdout
    assert "uh-core mission validate" in result.stdout


def test_plan_when_every_mission_is_done(repo: Repo) -> None:
    repo.mission("calc", "id: calc\ntitle: Calc\nstatus: done\n")
    result = repo.uh("harness", "plan")
    assert result.code == 0, result.stderr
    assert result.stdout == "nothing to plan: every mission is done (1 mission)\n"
