"""Steering a real CLI at work (``uh-core mission steer``): the message reaches the model in the
agent's own continued session, in the same sandbox, and the mission still goes green."""

from __future__ import annotations

import json
import subprocess
import threading
import time

import pytest

from tests.conftest import git
from tests.e2e.conftest import Agent

STEER = "Also keep the line exactly as written: the reviewer checks it."


# hermes 0.19.0 starts a new conversation for `-z` even with --resume: not steered (refused)
@pytest.mark.parametrize("agent", ["aider", "claude", "codex", "omp", "pi"], indirect=True)
def test_the_steering_reaches_the_model_in_the_continued_session(agent: Agent) -> None:
    held = threading.Event()
    agent.server.script.hold = held  # its first model call waits: the agent is at work
    run = agent.repo.start(
        "harness", "run", "--runtime", agent.runtime, "--json", stderr=subprocess.PIPE
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not agent.server.model_calls():
            assert time.monotonic() < deadline and run.poll() is None, "no model call came"
            time.sleep(0.05)
        sent = agent.repo.uh("mission", "steer", "m", STEER, "--by", "ana", "--json")
        assert sent.code == 0, sent.stderr
        assert json.loads(sent.stdout)["runtime"] == agent.runtime
        held.set()
        out, err = run.communicate(timeout=300)
    finally:
        held.set()
        if run.poll() is None:
            run.kill()
    data = json.loads(out)
    [record] = data["requirements"]
    assert run.returncode == 0 and record["outcome"] == "pass", err[-3000:]
    opening = record["attempts"][0]["agent"]
    logs = [agent.repo.root / opening[k] for k in ("stderr_log", "stdout_log")]
    assert len(record["attempts"]) == 1, [p.read_text()[-1000:] for p in logs]
    [attempt] = record["attempts"]
    assert attempt["agent"]["continued"] == 1
    [steered] = attempt["agent"]["steered"]
    assert steered["by"] == "ana" and steered["delivered"]
    assert "continued" in steered["delivery"] and "same sandbox" in steered["delivery"]
    # the model saw the steering in a continued conversation: the first turn's calls are in it
    calls = [json.dumps(call.body) for call in agent.server.model_calls()]
    first = next(n for n, body in enumerate(calls) if STEER in body)

    # its first turn's closing words (the model's, in no prompt) are in the continued one
    assert first > 0 and "checked that nothing else in the file changed" in calls[first]
    # (the scripted model edits again on any turn: aider's second block appends once more)
    assert git(agent.repo.root, "show", "harness/m:a.txt").startswith("hi\nhello from the agent\n")
    log = (agent.repo.root / ".harness/missions/m/events.ndjson").read_text().splitlines()
    started = [json.loads(line) for line in log if '"runtime.started"' in line]
    resumed = started[-1]["command"]  # its own session, resumed by id
    how = ("resume", " --session ", "--restore-chat-history")
    assert len(started) == 2 and any(flag in resumed for flag in how), resumed
    assert "--session " not in started[0]["command"]
