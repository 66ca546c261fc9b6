"""Budgets: checked before each mission starts, never during an attempt; running out is
not an error, and the ledger is still written."""

from __future__ import annotations

import json

from tests.conftest import git
from tests.harness.conftest import Project, write_config


def _three(project: Project) -> None:
    for mission_id in ("m2", "m3"):
        project.repo.mission(
            mission_id,
            f"id: {mission_id}\nacceptance_criteria:\n"
            f"  - id: made\n    check_command: test -f out/{mission_id}.txt\n",
        )
    project.repo.commit("more missions")


def test_max_requirements_skips_the_rest_with_the_reason(project: Project) -> None:
    _three(project)
    before = project.snapshot()
    agent = project.agent(
        "all", 'write("src/calc.py", GOOD)\nwrite(f"out/{os.environ[\'MISSION_ID\']}.txt", "x")\n'
    )
    result, data = project.run_json("--agent", agent, "--max-requirements", "2")
    assert result.code == 0, result.stderr  # running out is not an error
    assert project.snapshot() == before
    outcomes = [(r["mission_id"], r["outcome"], r["skip_code"]) for r in data["requirements"]]
    assert outcomes == [("calc", "pass", None), ("m2", "pass", None), ("m3", "skipped", "budget")]
    assert data["requirements"][2]["reason"] == "budget: max_requirements 2 reached (2 started)"
    assert data["stopped"] == data["requirements"][2]["reason"]
    assert data["budget"]["max_requirements"] == 2 and data["budget"]["started"] == 2
    assert data["settings"]["max_requirements"] == 2
    ledger = json.loads((project.root / data["ledger"]).read_text())
    assert ledger["requirements"][2]["skip_code"] == "budget"
    assert "harness/m3" not in git(project.root, "branch", "--list")
    # A tail of the audit log shows the budget used before each mission, and the skip.
    audit = project.events(".harness/audit/events.ndjson")
    checked = [e for e in audit if e["event"] == "harness.budget.checked"]
    assert [(e["next_mission"], e["started"], e["exhausted"]) for e in checked] == [
        ("calc", 0, None),
        ("m2", 1, None),
        ("m3", 2, "budget: max_requirements 2 reached (2 started)"),
    ]
    skipped = [e for e in audit if e["event"] == "harness.requirement.skipped"]
    assert [(e["mission_id"], e["code"]) for e in skipped] == [("m3", "budget")]
    started = next(e for e in audit if e["event"] == "harness.run.started")
    assert started["budget"]["max_requirements"] == 2
    finished = [e for e in audit if e["event"] == "harness.run.finished"][-1]
    assert finished["stopped"].startswith("budget:") and finished["skipped"] == 1
    text = project.run("--agent", agent, "--max-requirements", "1", "--force")
    assert "budget used: 1 of 1 mission\n" in text.stdout  # the noun agrees with the limit
    assert "[SKIPPED] m2    budget: max_requirements 1 reached" in text.stdout


def test_budget_seconds_from_the_config_is_checked_between_missions(project: Project) -> None:
    _three(project)
    write_config(project.repo, "budget_seconds: 0.5\n")
    project.repo.commit("budget")
    # The first mission's attempt outlasts the budget: it is never cut short.
    agent = project.agent(
        "slow",
        'import time\ntime.sleep(1.0)\nwrite("src/calc.py", GOOD)\n'
        'write(f"out/{os.environ[\'MISSION_ID\']}.txt", "x")\n',
    )
    result, data = project.run_json("--agent", agent)
    assert result.code == 0, result.stderr
    first, *rest = data["requirements"]
    assert first["outcome"] == "pass" and len(first["attempts"]) == 1
    assert [(r["outcome"], r["skip_code"]) for r in rest] == [("skipped", "budget")] * 2
    assert rest[0]["reason"].startswith("budget: ") and "budget_seconds 0.5" in rest[0]["reason"]
    assert data["budget"]["budget_seconds"] == 0.5 and data["budget"]["elapsed_s"] >= 1.0
    assert data["status"] == "completed"


def test_a_bad_budget_is_refused(project: Project) -> None:
    assert project.run("--agent", "x {prompt_file}", "--max-requirements", "0").code == 2
    assert project.run("--agent", "x {prompt_file}", "--budget-seconds", "0").code == 2
    write_config(project.repo, "max_requirements: 0\n")
    project.repo.commit("bad")
    refused = project.run("--agent", "x {prompt_file}")
    assert refused.code == 2 and "max_requirements" in refused.stderr
