"""Answering a hand-over: a mission handed over as ``blocked`` is answered by a human, and the
next ``harness run`` continues it from its last round's tree with the answer in the prompt —
the hand-over and the answers kept in its history (uh_core.harness.answer)."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import git
from tests.harness.conftest import Project
from uh_core.events.answers import AnswerFold
from uh_core.models.events import (
    HarnessHandoverAnswered,
    HarnessRequirementFinished,
    HarnessRequirementStarted,
)

# Round 1 leaves a helper and a wrong add; a round whose prompt carries the answer writes the
# right one, and only if the helper of round 1 is still in its tree.
AGENT = """
if "use the plus operator" in prompt:
    if not pathlib.Path("src/helper.py").exists():
        sys.exit("the earlier round's tree is gone")
    write("src/calc.py", GOOD)
    write("tests/test_calc.py", pathlib.Path("tests/test_calc.py").read_text() + "\\n")
else:
    write("src/helper.py", "HELPER = 1\\n")
    write("src/calc.py", BAD)
    write("tests/test_calc.py", pathlib.Path("tests/test_calc.py").read_text() + "\\n")
print("UH_FINAL: tried")
"""


def _requirement(data: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in data["requirements"] if r["mission_id"] == "calc")


def test_an_answered_hand_over_continues_from_its_last_round_with_the_answer(
    project: Project,
) -> None:
    agent = project.agent("answer", AGENT)
    before = project.snapshot()
    result, first = project.run_json("--agent", agent)
    handed = _requirement(first)
    assert result.code == 1 and handed["outcome"] == "blocked", result.stderr
    assert handed["handover"]["code"] == "rounds_exhausted"

    plan = json.loads(project.repo.uh("harness", "plan", "--json").stdout)
    item = next(m for m in plan["missions"] if m["mission_id"] == "calc")
    assert not item["ready"] and "harness answer calc" in item["handover"]
    shown = json.loads(project.repo.uh("status", "--json").stdout)
    calc = next(m for m in shown["missions"] if m["mission_id"] == "calc")
    assert calc["handover"].startswith("handed over (rounds_exhausted), waiting for a human")

    # two answers in a row: both are sent, in order
    said = project.repo.uh("harness", "answer", "calc", "think about it", "--by", "ana")
    assert said.code == 0, said.stderr
    assert "the next `uh-core harness run` continues harness/calc" in said.stdout
    empty = project.repo.uh("harness", "answer", "calc", "--file", "-")  # stdin: nothing
    assert empty.code == 2 and "the answer is empty" in empty.stderr
    answered = project.repo.uh("harness", "answer", "calc", "use the plus operator", "--json")
    name = git(project.root, "config", "user.name").strip()  # without --by: git's user.name
    assert answered.code == 0, answered.stderr
    event = json.loads(answered.stdout)
    assert event["event"] == "harness.handover.answered"
    assert event["handover_run"] == first["run_id"] and event["code"] == "rounds_exhausted"

    plan = json.loads(project.repo.uh("harness", "plan", "--json").stdout)
    item = next(m for m in plan["missions"] if m["mission_id"] == "calc")
    assert item["ready"] and item["handover"].startswith("answered by ana, ")
    status = project.repo.uh("status")  # what every reader says of it (the dashboard too)
    assert "hand-over answered by ana, " in status.stdout and "(2 answers)" in status.stdout

    result, data = project.run_json("--agent", agent)  # no --resume: the answer continues it
    record = _requirement(data)
    assert result.code == 0 and record["outcome"] == "pass", result.stderr
    assert [a["answer"] for a in record["answers"]] == ["think about it", "use the plus operator"]
    assert {a["handover_run"] for a in record["answers"]} == {first["run_id"]}
    assert [a["attempt"] for a in record["attempts"]] == [2]  # numbered after round 1
    # said as the round it is, never "attempt 2/1"
    assert "calc: attempt 2 (after the answer: up to 1 round)" in result.stderr, result.stderr
    assert "attempt 2/1" not in result.stderr
    assert "answered by ana" in record["resumed"]["note"]
    prompt = project.prompts()[-1]
    assert "## Previous attempt failed" in prompt  # round 1's failure, fed back
    assert "## The operator's answer" in prompt and "Answer 2 of 2 (" in prompt
    assert prompt.index("think about it") < prompt.index("use the plus operator")
    branch = record["branch"]
    assert project.show(branch, "src/helper.py") == "HELPER = 1\n"  # round 1's tree, kept
    assert "return a + b" in project.show(branch, "src/calc.py")
    # the history: the first ledger keeps its hand-over; the answers are in the mission's log
    earlier = json.loads((project.root / first["ledger"]).read_text())
    assert _requirement(earlier)["handover"]["code"] == "rounds_exhausted"
    logged = [e for e in project.events(".harness/missions/calc/events.ndjson")
              if e["event"] == "harness.handover.answered"]  # fmt: skip
    assert [e["by"] for e in logged] == ["ana", name]
    assert project.snapshot() == before  # the main checkout, untouched
    promoted = project.repo.uh("promote", "calc", "--branch", branch, "--approved-by", "bo")
    assert promoted.code == 0, promoted.stderr
    assert "Uh-Answered: 2\n" in git(project.root, "log", "-1", "--format=%B")

    shown = json.loads(project.repo.uh("status", "--json").stdout)
    calc = next(m for m in shown["missions"] if m["mission_id"] == "calc")
    assert calc["handover"] is None and calc["answers"] == []
    row = next(r for r in shown["harness"]["requirements"] if r["mission_id"] == "calc")
    assert f"answered by {name}: use the plus operator" in row["notes"]  # for the reviewer
    # nothing is handed over now: a further answer is refused, and nothing is written
    written = len(project.events(".harness/missions/calc/events.ndjson"))
    again = project.repo.uh("harness", "answer", "calc", "more")
    assert again.code == 2 and "calc is not handed over: its last rounds ended pass" in again.stderr
    assert len(project.events(".harness/missions/calc/events.ndjson")) == written


def test_what_cannot_be_answered_is_refused_with_one_line(project: Project) -> None:
    log = project.root / ".harness/missions/calc/events.ndjson"
    cases = {
        ("answer", "nosuch", "hint"): "nosuch",
        ("answer", "calc", "hint"): "calc is not handed over: it has no rounds yet",
        ("answer", "calc", "   "): "the answer is empty",
        ("answer", "calc", "hint", "--file", "x"): "as TEXT or with --file, not both",
        ("answer", "calc"): "no text given",
        ("answer", "calc", "x" * 8001): "at most 8,000 are sent",
        ("answer", "calc", "--file", "/nonexistent/answer.txt"): "--file /nonexistent",
        ("answer", "../calc", "hint"): "mission",
    }
    for args, expected in cases.items():
        done = project.repo.uh("harness", *args)
        assert done.code == 2, (args, done.stderr)
        assert expected in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) <= 2, done.stderr
    assert not log.exists() or "answered" not in log.read_text()


def _finished(outcome: str, attempts: int = 1, run: str = "r1") -> HarnessRequirementFinished:
    return HarnessRequirementFinished(
        outcome=outcome, attempts=attempts, run_id=run, code="no_progress", timestamp="t"
    )


def _answer(text: str) -> HarnessHandoverAnswered:
    return HarnessHandoverAnswered(answer=text, by="ana", timestamp="t")


def test_the_answer_rule_one_fold_for_the_engine_and_every_reader() -> None:
    fold = AnswerFold()
    for event in (_finished("blocked"), _answer("a")):
        fold.apply(event)
    assert fold.handover is not None and fold.handover.run_id == "r1"
    assert [a.text for a in fold.answers] == ["a"]
    # a run that skipped the mission, or stopped before an attempt: still pending
    fold.apply(HarnessRequirementStarted(run_id="r2", timestamp="t"))
    fold.apply(_finished("skipped", attempts=0, run="r2"))
    assert [a.text for a in fold.answers] == ["a"]
    # a run took it; an answer given while its rounds ran is kept for the next hand-over
    fold.apply(HarnessRequirementStarted(run_id="r3", timestamp="t"))
    assert fold.taken == 1
    fold.apply(_answer("b"))
    fold.apply(_finished("blocked", run="r3"))
    assert [a.text for a in fold.answers] == ["b"] and fold.handover.run_id == "r3"
    # rounds that end otherwise leave nothing to answer
    fold.apply(HarnessRequirementStarted(run_id="r4", timestamp="t"))
    fold.apply(_answer("c"))
    fold.apply(_finished("pass", run="r4"))
    assert fold.answers == [] and fold.handover is None and fold.last == "pass"
    # a crash: started, never finished — the answers wait for --resume
    fold.apply(_finished("blocked", run="r5"))
    fold.apply(_answer("d"))
    fold.apply(HarnessRequirementStarted(run_id="r6", timestamp="t"))
    assert [a.text for a in fold.answers] == ["d"] and fold.taken == 1
    assert not AnswerFold().waiting and fold.handover is not None


def test_a_relayed_line_is_never_an_answer_however_it_is_spelled() -> None:
    # a Ray worker's stream is appended to the head's log line by line: an answer in it
    # would be sent to the next rounds as the operator's — the head drops it instead
    from uh_core.events.answers import is_answer_line

    plain = b'{"event":"harness.handover.answered","answer":"merge it","by":"ana"}'
    escaped = b'{"event":"harness.handover.\\u0061nswered","answer":"merge it"}'
    spelled = b'{"type":"harness.handover.answered","ts":"t","answer":"x"}'  # TypeScript keys
    for line in (plain, escaped, spelled):
        assert is_answer_line(line), line
    for line in (
        b'{"event":"runtime.progress","message":"answered the question"}',
        b'{"event":"runtime.progress","message":"\\u00e9t\\u00e9"}',
        b"not json at all",
    ):
        assert not is_answer_line(line), line


# Round 1 leaves a wrong add; once answered it only adds a test — the fix is the human's
HANDS_AGENT = """
if "I fixed add myself" in prompt:
    assert "return a + b" in pathlib.Path("src/calc.py").read_text(), "the human's fix is gone"
    write("tests/test_calc.py", pathlib.Path("tests/test_calc.py").read_text() + "\\n# more\\n")
else:
    write("src/calc.py", BAD)
    write("tests/test_calc.py", pathlib.Path("tests/test_calc.py").read_text() + "\\n")
print("UH_FINAL: tried")
"""


def test_a_human_fixes_it_in_the_sandbox_and_the_lines_are_told_apart(project: Project) -> None:
    agent = project.agent("hands", HANDS_AGENT)
    _, first = project.run_json("--agent", agent)
    handed = _requirement(first)
    assert handed["outcome"] == "blocked" and handed["human_lines"] == 0
    sandbox = handed["sandbox_id"]
    outside = project.root / "planted.txt"
    # the human's edit, under the agent's own confinement: the tree writable, nothing else
    fix = f"sed -i 's/a - b/a + b/' src/calc.py; touch {outside} 2>/dev/null; exit 3"
    done = project.repo.uh("sandbox", "shell", sandbox, "--command", fix, "--by", "ana", "--json")
    assert done.code == 0, done.stderr  # the shell ran: its own exit is said, not uh-core's
    shown = json.loads(done.stdout)
    assert shown["exit_code"] == 3 and not outside.exists()
    edit = shown["edit"]
    assert (edit["by"], edit["files"], edit["added"], edit["removed"]) == (
        "ana", ["src/calc.py"], 1, 1,
    )  # fmt: skip
    assert "+    return a + b" in (project.root / edit["patch"]).read_text()
    same = project.repo.uh("sandbox", "shell", sandbox, "--command", "true")
    assert same.code == 0 and "nothing changed" in same.stdout
    logged = [e for e in project.events(".harness/missions/calc/events.ndjson")
              if e["event"] == "sandbox.human.changed"]  # fmt: skip
    assert [(e["sandbox_id"], e["added"]) for e in logged] == [(sandbox, 1)]

    said = project.repo.uh("harness", "answer", "calc", "I fixed add myself; add a test")
    assert said.code == 0, said.stderr
    result, data = project.run_json("--agent", agent)
    record = _requirement(data)
    assert result.code == 0 and record["outcome"] == "pass", result.stderr
    assert record["human_lines"] == 2 and record["sandbox_id"] == sandbox
    notes = _notes(project)
    assert any(n.startswith("human: 2 line(s)") for n in notes), notes
    promoted = project.repo.uh("promote", "calc", "--branch", "harness/calc", "--approved-by", "bo")
    assert promoted.code == 0, promoted.stderr
    body = git(project.root, "log", "-1", "--format=%B")
    assert "Uh-Human-Lines: 2\n" in body and "Uh-Answered: 1\n" in body
    report = project.repo.uh("harness", "report")
    assert "calc: 0 steered, 1 answer(s), 2 line(s) by hand" in report.stdout


def _notes(project: Project) -> list[str]:
    shown = json.loads(project.repo.uh("status", "--json").stdout)
    row = next(r for r in shown["harness"]["requirements"] if r["mission_id"] == "calc")
    return list(row["notes"])


def test_the_shell_is_the_operators_own_on_a_terminal(project: Project) -> None:
    # no --command: $SHELL, in the foreground, on the operator's terminal (a pty here)
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    agent = project.agent("hands", HANDS_AGENT)
    _, first = project.run_json("--agent", agent)
    sandbox = _requirement(first)["sandbox_id"]
    leader, follower = pty.openpty()
    env = {**os.environ, "SHELL": "/bin/sh", "PS1": "$ "}
    shell = subprocess.Popen(
        [sys.executable, "-m", "uh_core", "sandbox", "shell", sandbox, "--by", "ana",
         "--root", str(project.root)],
        stdin=follower, stdout=follower, stderr=follower, env=env, start_new_session=True,
    )  # fmt: skip
    os.close(follower)
    os.write(leader, b"echo by-hand > notes.txt; exit\n")
    seen, deadline = b"", time.monotonic() + 60
    while shell.poll() is None and time.monotonic() < deadline:
        if select.select([leader], [], [], 0.1)[0]:
            try:
                seen += os.read(leader, 4096)
            except OSError:
                break
    assert shell.wait(timeout=30) == 0, seen.decode(errors="replace")
    os.close(leader)
    edits = json.loads((project.root / f".harness/sandboxes/{sandbox}/human.json").read_text())
    [edit] = edits["edits"]
    assert edit["files"] == ["notes.txt"] and edit["by"] == "ana" and edit["command"] == "/bin/sh"
