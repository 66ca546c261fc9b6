"""Work done before a deadline is kept (docs/harness.md "Deadlines"): the prompt says the
attempt's time limit; an agent stopped at it with changes in the tree has that tree judged
like any round's, a green counts (recorded ``timed_out``), and the next round starts from
what it left."""

from __future__ import annotations

from tests.harness.conftest import Project


def test_the_tree_left_at_the_deadline_is_judged_and_a_green_counts(project: Project) -> None:
    # writes the fix, then keeps "thinking" past the deadline
    agent = project.agent("slow", 'write("src/calc.py", GOOD)\nimport time\ntime.sleep(60)\n')
    result, data = project.run_json("--agent", agent, "--timeout", "2")
    assert result.code == 0, result.stderr
    [record] = data["requirements"]
    assert record["outcome"] == "pass" and record["commit"]
    [attempt] = record["attempts"]
    assert attempt["timed_out"] is True and attempt["agent"]["timed_out"] is True
    assert "stopped at its deadline" in attempt["verdict"]
    stage = attempt["stages"][0]
    assert stage["stage"] == "agent" and stage["passed"] is True
    assert stage["detail"].startswith("timed_out after ")
    assert [s["stage"] for s in attempt["stages"] if not s["passed"]] == []
    prompt = project.prompts()[0]
    assert "## Time limit" in prompt and "stopped after 2 seconds" in prompt


def test_red_work_at_the_deadline_is_where_the_next_round_starts(project: Project) -> None:
    agent = project.agent(
        "slow",
        "if n == 1:\n"
        "    write('src/calc.py', 'def add(a, b):\\n    return a - b\\n')\n"  # half done
        "    import time\n    time.sleep(60)\n"
        "else:\n"  # the next round finds the tree as the first left it, and finishes it
        "    assert 'a - b' in pathlib.Path('src/calc.py').read_text()\n"
        "    write('src/calc.py', GOOD)\n",
    )
    result, data = project.run_json("--agent", agent, "--timeout", "3", "--max-attempts", "2")
    assert result.code == 0, result.stderr
    first, second = data["requirements"][0]["attempts"]
    assert first["timed_out"] is True and first["outcome"] == "fail"
    assert first["stage"] == "verify"  # judged, not dismissed at the agent stage
    assert second["timed_out"] is False and second["outcome"] == "pass"


def test_a_deadline_with_nothing_changed_is_still_red_at_the_agent(project: Project) -> None:
    agent = project.agent("idle", "import time\ntime.sleep(60)\n")
    result, data = project.run_json("--agent", agent, "--timeout", "1")
    assert result.code == 1
    [attempt] = data["requirements"][0]["attempts"]
    assert attempt["stage"] == "agent" and attempt["outcome"] == "fail"
