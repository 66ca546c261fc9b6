"""``harness run`` end to end: real repositories, scripted agents, real subprocesses."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import yaml

from tests.conftest import git, interruptible
from tests.harness.conftest import Project, failing, stage_names, write_config
from tests.runtime.helpers import add_manifest, live_processes_with

STAGES = ["agent", "write-scope", "verify", "tests", "artifacts"]


def test_pass_first_try(project: Project) -> None:
    before = project.snapshot()
    base = before.head
    printed = project.repo.uh("harness", "prompt", "calc").stdout
    agent = project.agent(
        "good",
        'write("src/calc.py", GOOD)\nprint("```uh-runtime-final-message\\nadd returns a + b\\n```")\n',
    )
    result, data = project.run_json("--agent", agent)
    assert result.code == 0, result.stderr
    assert project.snapshot() == before
    [req] = data["requirements"]
    assert req["outcome"] == "pass" and req["branch"] == "harness/calc"
    assert len(req["attempts"]) == 1 and stage_names(req) == STAGES
    attempt = req["attempts"][0]
    assert attempt["final_message"] == "add returns a + b"
    assert attempt["files_changed"] == ["src/calc.py"]
    tests = attempt["stages"][3]
    assert tests["evidence"]["source"] == "report"
    assert tests["evidence"]["counts"]["passed"] == 2
    assert tests["evidence"]["selectors"] == {"tests/test_calc.py::test_add": "passed"}
    # The work and status: done are one commit on the branch, on top of the base.
    assert git(project.root, "rev-parse", "harness/calc~1").strip() == base
    assert req["commit"] == git(project.root, "rev-parse", "harness/calc").strip()
    assert project.show("harness/calc", "src/calc.py") == "def add(a, b):\n    return a + b\n"
    on_branch = project.show("harness/calc", ".harness/missions/calc/mission.yaml")
    assert "status: done  # the harness sets done on its branch" in on_branch
    assert (
        yaml.safe_load(project.show("HEAD", ".harness/missions/calc/mission.yaml"))["status"]
        == "pending"
    )
    changed = git(project.root, "diff", "--name-only", base, "harness/calc").split()
    assert changed == [".harness/missions/calc/mission.yaml", "src/calc.py"]
    # The ledger on disk is what --format json printed; the prompt printed is the one sent.
    ledger = json.loads((project.root / data["ledger"]).read_text())
    assert ledger == {k: v for k, v in data.items() if k != "ledger"}
    assert ledger["status"] == "completed" and ledger["totals"]["passed"] == 1
    assert project.prompts() == [printed]
    audit = [e["event"] for e in project.events(".harness/audit/events.ndjson")]
    assert audit[-3:] == ["harness.run.started", "harness.budget.checked", "harness.run.finished"]
    kinds = [
        e
        for e in project.events(".harness/missions/calc/events.ndjson")
        if e["event"].startswith("harness.")
    ]
    assert [e["event"] for e in kinds] == [
        "harness.requirement.started", "harness.attempt.started",
        *["harness.gate.checked"] * 5,
        "harness.attempt.finished", "harness.requirement.finished",
    ]  # fmt: skip
    assert [e["stage"] for e in kinds if e["event"] == "harness.gate.checked"] == STAGES
    assert all(e["run_id"] == data["run_id"] for e in kinds)
    index = yaml.safe_load((project.root / ".harness/sandboxes/index.yaml").read_text())
    [sandbox] = index["sandboxes"]
    assert sandbox["kind"] == "harness" and sandbox["branch"] == "harness/calc"
    assert sandbox["status"] == "passed" and sandbox["id"] == req["sandbox_id"]


def test_pass_on_attempt_two_with_the_failure_fed_back(project: Project) -> None:
    before = project.snapshot()
    agent = project.agent("second", 'write("src/calc.py", BAD if n == 1 else GOOD)\n')
    result, data = project.run_json("--agent", agent, "--max-attempts", "3")
    assert result.code == 0, result.stderr
    assert project.snapshot() == before
    [req] = data["requirements"]
    assert req["outcome"] == "pass" and len(req["attempts"]) == 2
    first = req["attempts"][0]
    assert first["outcome"] == "fail" and first["stage"] == "verify"
    assert "adds" in first["failure_output"] and first["verdict"].startswith("red at verify")
    one, two = project.prompts()
    assert "## Previous attempt failed" not in one
    feedback = two.split("## Previous attempt failed", 1)[1]
    assert "Attempt 1 failed at the `verify` stage" in feedback
    assert "[FAIL] calc" in feedback and "adds (block)" in feedback
    assert two.index("## Definition of done") < two.index("## Previous attempt failed")
    assert two.index("## Previous attempt failed") < two.index("## Final message")


def test_blocked_for_a_human_after_the_last_attempt(project: Project) -> None:
    before = project.snapshot()
    agent = project.agent("bad", 'write("src/calc.py", BAD)\n')
    result = project.run("--agent", agent, "--max-attempts", "2")
    assert result.code == 1, result.stderr
    assert project.snapshot() == before
    lines = result.stdout.splitlines()
    assert lines[1].startswith("[BLOCKED] calc  attempts 2/2  branch harness/calc  no_progress:")
    assert (
        "totals: 0 passed, 0 failed, 0 skipped, 1 blocked; pass rate 0% 0/1; 2 attempt(s)"
        in result.stdout
    )
    assert lines[-1] == "nothing to promote: no mission passed"
    ledger_file = next(line.split(": ", 1)[1] for line in lines if line.startswith("ledger: "))
    ledger = json.loads((project.root / ledger_file).read_text())
    [req] = ledger["requirements"]
    assert [a["outcome"] for a in req["attempts"]] == ["fail", "fail"]
    assert req["failing_stage"] == "verify"
    # Parked for a human: no commit on the branch, the work left in its worktree.
    assert git(project.root, "rev-parse", "harness/calc").strip() == before.head
    worktree = project.root / req["worktree"]
    assert (worktree / "src/calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    index = yaml.safe_load((project.root / ".harness/sandboxes/index.yaml").read_text())
    assert index["sandboxes"][0]["status"] == "parked"


def test_missions_run_in_depends_on_order(project: Project) -> None:
    for mission_id, deps in (("a-top", ["m-mid"]), ("m-mid", ["z-base"]), ("z-base", [])):
        project.repo.mission(
            mission_id,
            f"id: {mission_id}\ndepends_on: {deps}\nacceptance_criteria:\n"
            f"  - id: made\n    check_command: test -f out/{mission_id}.txt\n",
        )
    project.repo.mission("finished", "id: finished\nstatus: done\n")
    write_config(project.repo, test_cmd=None)  # no test command: the tests stage notes it
    project.repo.commit("missions")
    before = project.snapshot()
    order = project.agents / "order.txt"
    agent = project.agent(
        "order",
        f'mission = os.environ["MISSION_ID"]\nwrite(f"out/{{mission}}.txt", "done")\n'
        f'with open({str(order)!r}, "a") as log:\n    log.write(mission + "\\n")\n',
    )
    result, data = project.run_json(
        "--agent", agent, "--req", "a-top", "--req", "z-base", "--req", "m-mid", "--req", "finished"
    )
    # "finished" is not pending: skipped, and a skipped mission did not pass.
    assert result.code == 1
    assert project.snapshot() == before
    assert order.read_text().split() == ["z-base", "m-mid", "a-top"]
    outcomes = [(r["mission_id"], r["outcome"]) for r in data["requirements"]]
    assert outcomes == [
        ("finished", "skipped"),
        ("z-base", "pass"),
        ("m-mid", "pass"),
        ("a-top", "pass"),
    ]
    assert data["requirements"][0]["reason"] == "status is done; only pending missions run"
    tests = data["requirements"][1]["attempts"][0]["stages"][3]
    assert tests["passed"] and tests["evidence"]["source"] == "none"
    # without a test command, the missing evidence is said, as for the tests themselves
    proof = tests["evidence"]["fail_to_pass"]["problem"]
    assert proof == "not judged: no test command (test_cmd) is configured"


def test_a_dirty_main_tree_is_refused_ignored_files_do_not_count(project: Project) -> None:
    agent = project.agent("good", 'write("src/calc.py", GOOD)\n')
    (project.root / "notes.txt").write_text("draft\n")
    (project.root / "README.md").write_text("changed\n")
    result = project.run("--agent", agent)
    assert result.code == 2
    assert "uncommitted changes" in result.stderr and "notes.txt" in result.stderr
    assert "README.md" in result.stderr and "Traceback" not in result.stderr
    assert not (project.root / ".harness/runs").exists()
    assert "harness/calc" not in git(project.root, "branch", "--list")
    git(project.root, "checkout", "-q", "README.md")
    (project.root / "notes.txt").unlink()
    (project.root / "debug.log").write_text("ignored\n")
    before = project.snapshot()
    result = project.run("--agent", agent)
    assert result.code == 0, result.stderr
    assert project.snapshot() == before and (project.root / "debug.log").exists()


def test_an_existing_branch_is_skipped_unless_forced(project: Project) -> None:
    git(project.root, "branch", "harness/calc")
    before = project.snapshot()
    agent = project.agent("good", 'write("src/calc.py", GOOD)\n')
    result, data = project.run_json("--agent", agent)
    assert result.code == 1
    [req] = data["requirements"]
    assert req["outcome"] == "skipped" and "already exists" in req["reason"]
    assert req["attempts"] == [] and not (project.root / ".harness/prompts").exists()
    result, data = project.run_json("--agent", agent, "--force")
    assert result.code == 0, result.stderr
    assert data["requirements"][0]["outcome"] == "pass"
    assert project.snapshot() == before


def test_an_agent_past_its_timeout_is_stopped_with_its_whole_group(project: Project) -> None:
    marker = "41.2345"
    agent = project.agent(
        "sleeper",
        f'subprocess.Popen(["sleep", "{marker}"])\nimport time\ntime.sleep(30)\n',
    )
    result, data = project.run_json("--agent", agent, "--timeout", "1")
    assert result.code == 1  # stopped by its timeout (the detail says so), not after 30 s
    agent_stage = failing(data["requirements"][0])
    assert agent_stage["stage"] == "agent" and "timed out after 1 s" in agent_stage["detail"]
    assert agent_stage["evidence"]["timed_out"] is True
    assert live_processes_with(f"sleep {marker}") == []


def test_a_runtime_adapter_runs_the_attempts(project: Project) -> None:
    add_manifest(
        project.repo,
        "fixer",
        "runtime_kind: script\nconfig:\n  script: |\n"
        '    test -f "$UH_PROMPT_FILE" || exit 3\n'
        "    printf 'def add(a, b):\\n    return a + b\\n' > src/calc.py\n",
    )
    project.repo.commit("adapter")
    before = project.snapshot()
    result, data = project.run_json("--runtime", "fixer")
    assert result.code == 0, result.stderr
    assert project.snapshot() == before
    [req] = data["requirements"]
    assert req["outcome"] == "pass" and req["attempts"][0]["agent"]["runtime"] == "fixer"
    assert req["sandbox_id"].startswith("sbx-calc-fixer-")


def test_ctrl_c_stops_the_agent_and_still_writes_the_ledger(project: Project) -> None:
    started = project.agents / "started"
    agent = project.agent(
        "slow", f"pathlib.Path({str(started)!r}).touch()\nimport time\ntime.sleep(30)\n"
    )
    command = [sys.executable, "-m", "uh_core", "harness", "run", "--agent", agent, "--json"]
    proc = subprocess.Popen(
        [*command, "--root", str(project.root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    deadline = time.monotonic() + 20
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130
    data = json.loads(out)
    assert data["status"] == "interrupted"
    assert json.loads((project.root / data["ledger"]).read_text())["status"] == "interrupted"
    [req] = data["requirements"]
    # stopped before its gate ruled: interrupted, not judged (the pass rate does not count
    # it, as `--resume` does not charge the attempt)
    assert req["outcome"] == "interrupted" and req["attempts"][0]["outcome"] == "interrupted"
    totals = data["totals"]
    assert (totals["interrupted"], totals["failed"], totals["judged"]) == (1, 0, 0), totals
    assert totals["pass_rate"] is None
    from uh_core.harness.ledger import read_ledger
    from uh_core.harness.summary import render

    text = render(read_ledger(project.root / data["ledger"]), data["ledger"])
    assert "[INTERRUPTED] calc  attempts 1/" in text, text
    assert "0 failed" in text and "1 interrupted; pass rate -;" in text, text
