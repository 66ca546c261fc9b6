"""What driving the real CLIs found, one test each (issue 18's defects), on the CLI it is about.

aider's final message kept whole (its stdout wraps at 80 columns) is checked by
``test_mission_run.py::test_the_edit_lands_is_captured_and_verifies``, on the same real run."""

from __future__ import annotations

import pytest
import yaml

from tests.e2e.conftest import Agent
from tests.e2e.test_mission_run import run


@pytest.mark.parametrize("agent", ["aider"], indirect=True)
def test_aider_giving_up_on_a_reply_it_cannot_apply_is_failed(agent: Agent) -> None:
    # aider asks the model again ("reflects") three times, prints "Only 3 reflections allowed,
    # stopping." and exits 0 having applied nothing: that was reported SUCCEEDED.
    agent.server.script.mode = "badedit"
    code, data, _ = run(agent)
    assert (code, data["status"]) == (1, "failed"), data
    assert "could not apply the model's reply" in data["error"], data
    assert "reflections allowed" in data["error"]
    assert len(agent.server.model_calls()) == 4  # the reply and three reflections


@pytest.mark.parametrize("agent", ["aider", "hermes"], indirect=True)
def test_a_cancelled_cli_prints_the_signal_not_none(agent: Agent) -> None:
    agent.server.script.mode = "slow"
    runner = agent.repo.start("mission", "run", "m", "--runtime", agent.runtime)
    try:
        import time

        deadline = time.monotonic() + 60
        while not agent.server.model_calls() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert agent.repo.uh("mission", "cancel", "m").code == 0
        out, _ = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    exit_line = next(line for line in out.splitlines() if line.startswith("exit: "))
    assert "None" not in exit_line and "SIGTERM" in exit_line, out
    session = yaml.safe_load(
        next(
            (agent.repo.root / ".harness/sandboxes").glob("*/missions/m/runtime-session.yaml")
        ).read_text()
    )
    assert session["status"] == "cancelled"
