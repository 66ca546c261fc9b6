"""``--resume``: an interrupted run leaves no ledger; the prompt archive says where to go on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import git
from tests.harness.conftest import Project


def _wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_kill_9_during_an_attempt_then_resume_finishes_without_charging_it(
    project: Project,
) -> None:
    before = project.snapshot()
    pid_file = project.agents / "agent.pid"
    agent = project.agent(
        "slow",
        f"""\
        if n == 1:
            write("notes/partial.txt", "work in progress\\n")  # uncommitted, must survive
            pathlib.Path({str(pid_file)!r}).write_text(str(os.getpid()))
            import time
            time.sleep(120)
        assert pathlib.Path("notes/partial.txt").read_text() == "work in progress\\n"
        write("src/calc.py", GOOD)
        """,
    )
    harness = subprocess.Popen(
        [sys.executable, "-m", "uh_core", "harness", "run", "--agent", agent,
         "--max-attempts", "1", "--root", str(project.root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        _wait_for(pid_file)
        harness.kill()  # SIGKILL: no ledger, no finally, no cleanup
        harness.wait(timeout=30)
    finally:
        if harness.poll() is None:
            harness.kill()
        os.kill(int(pid_file.read_text()), signal.SIGKILL)  # the orphaned agent
    assert list((project.root / ".harness/runs").glob("*.json")) == []
    assert git(project.root, "branch", "--list", "harness/calc").strip()
    # Without --resume the branch blocks the mission; --force with --resume is refused.
    refused = project.run("--agent", agent, "--resume", "--force")
    assert refused.code == 2 and "--resume" in refused.stderr
    result, data = project.run_json("--agent", agent, "--max-attempts", "1", "--resume")
    assert result.code == 0, result.stderr
    assert project.snapshot() == before
    [req] = data["requirements"]
    assert req["outcome"] == "pass"
    # The killed attempt was not charged: attempt 1 of 1 ran again, in the same worktree.
    assert [a["attempt"] for a in req["attempts"]] == [1]
    assert req["resumed"]["charged_attempts"] == 0
    assert req["resumed"]["last_attempt_begun"] == 1 and req["resumed"]["uncharged"] == 1
    assert "before its gate verdict" in req["resumed"]["note"]
    assert project.show("harness/calc", "notes/partial.txt") == "work in progress\n"
    assert project.show("harness/calc", "src/calc.py") == "def add(a, b):\n    return a + b\n"
    assert data["settings"]["resume"] is True


def test_resume_after_a_judged_failure_charges_it_and_feeds_it_back(project: Project) -> None:
    agent = project.agent("bad-then-good", 'write("src/calc.py", BAD if n == 1 else GOOD)\n')
    first, data = project.run_json("--agent", agent, "--max-attempts", "1")
    assert first.code == 1 and data["requirements"][0]["failing_stage"] == "verify"
    # Every attempt spent: resume has nothing to run.
    spent, data = project.run_json("--agent", agent, "--max-attempts", "1", "--resume")
    assert spent.code == 1
    assert "already spent" in data["requirements"][0]["reason"]
    assert data["requirements"][0]["attempts"] == []
    # The worktree is gone (discarded); --resume checks the branch out in a new sandbox.
    sandbox_id = data["requirements"][0]["sandbox_id"]
    assert project.repo.uh("sandbox", "discard", sandbox_id).code == 0
    result, data = project.run_json("--agent", agent, "--max-attempts", "2", "--resume")
    assert result.code == 0, result.stderr
    [req] = data["requirements"]
    assert [a["attempt"] for a in req["attempts"]] == [2]
    assert req["resumed"]["charged_attempts"] == 1
    assert req["sandbox_id"] != sandbox_id and req["resumed"]["sandbox_id"] is None
    assert git(project.root, "rev-parse", "harness/calc~1").strip() == req["base_commit"]
    last_prompt = project.prompts()[-1]
    assert "## Previous attempt failed" in last_prompt
    assert "Attempt 1 failed at the `verify` stage" in last_prompt
    # Once delivered, --resume leaves the branch alone.
    _, data = project.run_json("--agent", agent, "--resume")
    assert data["requirements"][0]["outcome"] == "skipped"
    assert "already passed the gate" in data["requirements"][0]["reason"]
