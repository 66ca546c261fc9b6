"""Rounds that must make progress, the hand-over to a human, same case same judge: scripted
agents whose round counter lives beside them (docs/harness.md, "Rounds must make progress")."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any

from tests.conftest import git
from tests.harness.conftest import Project


def _only(data: dict[str, Any]) -> dict[str, Any]:
    [req] = data["requirements"]
    return req


def test_an_agent_repeating_its_change_stops_at_round_two_of_five(project: Project) -> None:
    before = project.snapshot()
    agent = project.agent(
        "repeat",
        'write("src/calc.py", BAD)\nprint("```uh-runtime-final-message\\nsubtract\\n```")\n',
    )
    result, data = project.run_json("--agent", agent, "--max-attempts", "5")
    assert result.code == 1
    assert project.snapshot() == before
    req = _only(data)
    # Before: every one of the 5 attempts was spent on the same tree. Now: 2.
    assert len(req["attempts"]) == 2 and data["totals"]["attempts"] == 2
    assert (project.agents / "repeat.count").read_text() == "2"
    assert req["outcome"] == "blocked" and req["failing_stage"] == "verify"
    handover = req["handover"]
    assert handover["code"] == "no_progress"
    assert "round 2 judged the same tree as round 1" in handover["reason"]
    assert req["reason"].startswith("no_progress: round 2 judged the same tree as round 1")
    one, two = handover["rounds"]
    assert [one["round"], two["round"]] == [1, 2]
    assert one["hypothesis"] == "subtract"
    assert one["files"] == [{"path": "src/calc.py", "added": 1, "removed": 1}]
    assert one["criteria"] == {"adds": "failed", "tests/test_calc.py::test_add": "not run"}
    assert one["verdict"].startswith("red at verify")
    assert one["prompt_file"].startswith(".harness/prompts/calc-")
    assert (project.root / two["prompt_file"]).is_file()
    assert data["totals"]["blocked"] == 1 and data["totals"]["failed"] == 0
    # Parked for a human, nothing committed; the summary says so, round by round.
    assert git(project.root, "rev-parse", "harness/calc").strip() == before.head
    text = project.repo.uh("harness", "run", "--agent", agent, "--force", "--max-attempts", "5")
    lines = text.stdout.splitlines()
    assert lines[1].startswith("[BLOCKED] calc  attempts 2/5  branch harness/calc  no_progress:")
    assert "    round 1: red at verify" in text.stdout
    assert "      hypothesis: subtract" in text.stdout
    assert "      change: 1 file(s) +1 -1 (src/calc.py +1 -1)" in text.stdout
    assert "      criteria: adds failed, tests/test_calc.py::test_add not run" in text.stdout
    assert (
        "totals: 0 passed, 0 failed, 0 skipped, 1 blocked; pass rate 0% 0/1; 2 attempt(s)"
        in text.stdout
    )
    assert text.code == 1


def test_an_agent_changing_nothing_stops_at_round_two(project: Project) -> None:
    agent = project.agent("idle", "pass\n")
    result, data = project.run_json("--agent", agent, "--max-attempts", "4")
    assert result.code == 1
    req = _only(data)
    assert len(req["attempts"]) == 2 and req["outcome"] == "blocked"
    assert req["handover"]["code"] == "no_progress"
    assert [r["hypothesis"] for r in req["handover"]["rounds"]] == ["none given"] * 2
    assert [r["files"] for r in req["handover"]["rounds"]] == [[], []]


def test_the_same_change_again_on_a_moved_tree_with_the_same_failure_stops(
    project: Project,
) -> None:
    # Each round appends the same line: the tree differs every time, the round's own change
    # and its failure do not.
    agent = project.agent(
        "append",
        'p = pathlib.Path("src/calc.py")\n'
        'if n == 1:\n    write("src/calc.py", BAD)\n'
        'else:\n    p.write_text(p.read_text() + "# retry\\n")\n',
    )
    result, data = project.run_json("--agent", agent, "--max-attempts", "5")
    assert result.code == 1
    req = _only(data)
    assert len(req["attempts"]) == 3
    trees = [a["tree"] for a in req["attempts"]]
    assert len(set(trees)) == 3
    changes = [a["change"] for a in req["attempts"]]
    assert changes[1] == changes[2] != changes[0]
    assert req["handover"]["code"] == "no_progress"
    assert "round 3 repeated round 2's change and failed the same way" in req["reason"]


def test_a_fix_on_round_two_passes(project: Project) -> None:
    agent = project.agent("fixer", 'write("src/calc.py", BAD if n == 1 else GOOD)\n')
    result, data = project.run_json("--agent", agent, "--max-attempts", "5")
    assert result.code == 0, result.stderr
    req = _only(data)
    assert req["outcome"] == "pass" and len(req["attempts"]) == 2
    assert req["handover"] is None


def test_rounds_spent_with_progress_hand_over_as_exhausted(project: Project) -> None:
    # A different wrong answer each round: progress every time, never green.
    agent = project.agent(
        "wander", 'write("src/calc.py", f"def add(a, b):\\n    return a * b + {n}\\n")\n'
    )
    result, data = project.run_json("--agent", agent, "--max-attempts", "3")
    assert result.code == 1
    req = _only(data)
    assert len(req["attempts"]) == 3 and req["outcome"] == "blocked"
    assert req["handover"]["code"] == "rounds_exhausted"
    assert req["reason"].startswith("rounds_exhausted: round 3 of 3 ended red at verify")
    assert [r["round"] for r in req["handover"]["rounds"]] == [1, 2, 3]


def test_every_round_reruns_the_same_judge(project: Project) -> None:
    """Same case, same judge: the criteria ids and their commands, the judging mode, the test
    command and the selectors are those of round 1 in every round, even when the agent edits
    the mission and the selectors' test file in its worktree."""
    agent = project.agent(
        "judge",
        "import re\n"
        'm = pathlib.Path(".harness/missions/calc/mission.yaml")\n'
        'm.write_text(m.read_text().replace("severity", "x") + "\\n# round " + str(n) + "\\n")\n'
        'write("src/calc.py", f"def add(a, b):\\n    return a * b + {n}\\n")\n',
    )
    result, data = project.run_json("--agent", agent, "--max-attempts", "3")
    assert result.code == 1
    req = _only(data)
    attempts = req["attempts"]
    assert len(attempts) == 3
    assert len({a["judge"] for a in attempts}) == 1 and attempts[0]["judge"]
    # write-scope refuses the edited mission: the judge never reads the worktree's copy.
    assert {a["stage"] for a in attempts} == {"write-scope"}
    # Verify green, tests red with a new failing test each round: both judges run every round.
    agent2 = project.agent(
        "judge2",
        'write("src/calc.py", GOOD)\n'
        'write(f"tests/test_extra_{n}.py", "def test_x():\\n    assert False\\n")\n',
    )
    result, data = project.run_json("--agent", agent2, "--max-attempts", "3", "--force")
    attempts = _only(data)["attempts"]
    assert [a["stage"] for a in attempts] == ["tests"] * 3
    assert len({a["judge"] for a in attempts}) == 1
    verify = [next(s for s in a["stages"] if s["stage"] == "verify") for a in attempts]
    assert [v["evidence"]["criteria"] for v in verify] == [{"adds": "passed"}] * 3
    tests = [next(s for s in a["stages"] if s["stage"] == "tests") for a in attempts]
    # the same command; only the report's path is the round's own room
    commands = {re.sub(r"judge/tests-[^/]+/", "judge/R/", t["evidence"]["command"]) for t in tests}
    assert len(commands) == 1 and "--junitxml=" in commands.pop()
    assert [t["evidence"]["selectors"] for t in tests] == [
        {"tests/test_calc.py::test_add": "passed"}
    ] * 3


def test_the_hand_over_shows_in_report_status_and_the_missions_own_log(
    project: Project,
) -> None:
    agent = project.agent("stuck", 'write("src/calc.py", BAD)\n')
    result, _ = project.run_json("--agent", agent, "--max-attempts", "5")
    assert result.code == 1
    report = project.repo.uh("harness", "report", "--format", "json")
    [item] = json.loads(report.stdout)["handed_over"]
    assert item["mission_id"] == "calc" and item["code"] == "no_progress"
    assert [r["round"] for r in item["rounds"]] == [1, 2]
    text = project.repo.uh("harness", "report").stdout
    assert "Handed over to a human (blocked; the newest run of each mission):" in text
    assert "  calc  no_progress: round 2 judged the same tree as round 1" in text
    assert "    round 2: red at verify" in text
    # The mission's own log says blocked, with the code; the workspace reader shows the rounds.
    finished = project.events(".harness/missions/calc/events.ndjson")[-1]
    assert finished["event"] == "harness.requirement.finished"
    assert finished["outcome"] == "blocked" and finished["code"] == "no_progress"
    status = json.loads(project.repo.uh("status", "--json").stdout)
    assert '"handover"' in json.dumps(status)
    assert "round 1: red at verify" in json.dumps(status)
    assert '"blocked"' in json.dumps(status)


def test_the_ledger_schema_carries_the_hand_over() -> None:
    schema = subprocess.run(
        [sys.executable, "-m", "uh_core", "schema", "harness-run"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in ('"handover"', '"HandoverRound"', '"judge"', '"change"', '"no_progress"'):
        assert name in schema, name
