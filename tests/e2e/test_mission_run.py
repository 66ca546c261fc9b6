"""Each real CLI through ``uh-core mission run`` against the scripted model server: the edit
lands and verifies, a model error is ``failed``, a reply that changes nothing is ``no_change``,
and cancel leaves nothing alive."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import Repo
from tests.e2e.conftest import Agent, live_with_marker

TIMEOUT = "120"


def run(agent: Agent, *extra: str) -> tuple[int, dict[str, Any], str]:
    result = agent.repo.uh(
        "mission", "run", "m", "--runtime", agent.runtime, "--json", "--timeout", TIMEOUT, *extra
    )
    try:
        data = json.loads(result.stdout)
    except ValueError:
        raise AssertionError(f"no JSON from mission run: {result}") from None
    return result.code, data, result.stderr


def records(repo: Repo, data: dict[str, Any]) -> Path:
    return repo.root / ".harness/sandboxes" / data["sandbox"] / "missions/m"


def test_the_edit_lands_is_captured_and_verifies(agent: Agent) -> None:
    # the dry run first: it must print, word for word, the command the run then uses (one
    # real run of the CLI proves both; only the sandbox's timestamp is unknown beforehand)
    dry = agent.repo.uh("mission", "dry-run", "m", "--runtime", agent.runtime, "--json")
    assert dry.code == 0, dry
    shown = json.loads(dry.stdout)["plan"]["display"]
    code, data, stderr = run(agent)
    assert (code, data["status"]) == (0, "succeeded"), (data, stderr)
    assert data["touched_paths"] == ["a.txt"]
    folder = records(agent.repo, data)
    patch = (folder / "diff.patch").read_text()
    assert "+hello from the agent" in patch and "uh-runtime-final-message" not in patch
    session = yaml.safe_load((folder / "runtime-session.yaml").read_text())
    assert session["usage"]["input_tokens"] > 0 and session["usage"]["output_tokens"] > 0
    assert session["blockers"] == []
    assert _shape(shown) == _shape(session["command"])
    # the final message is the sentinel block, whole (no line cut by the CLI's wrapping)
    final = (folder / "runtime-final.txt").read_text()
    assert agent.server.script.summary in final, final
    # issue 18: aider wraps stdout at 80 columns; its final message comes from its chat
    # history, so the summary line is whole
    assert f"summary: {agent.server.script.summary}\n" in final, final
    assert session["summary"] == agent.server.script.summary
    assert len(agent.server.model_calls()) >= 1
    verified = agent.repo.uh("verify", "m", "--sandbox", data["sandbox"], "--json")
    assert verified.code == 0, verified
    assert json.loads(verified.stdout)["status"] == "passed"


def test_a_model_error_is_failed(agent: Agent) -> None:
    agent.server.script.mode = "auth"
    code, data, _ = run(agent)
    assert (code, data["status"]) == (1, "failed"), data
    assert data["error"], data
    assert data["touched_paths"] == []


def test_a_reply_that_changes_nothing_is_no_change(agent: Agent) -> None:
    agent.server.script.mode = "noop"
    code, data, _ = run(agent)
    assert (code, data["status"]) == (1, "no_change"), data
    assert "changed nothing" in data["error"]


def test_cancel_stops_the_cli_and_leaves_nothing_alive(agent: Agent) -> None:
    agent.server.script.mode = "slow"
    runner = agent.repo.start("mission", "run", "m", "--runtime", agent.runtime, "--json")
    try:
        deadline = time.monotonic() + 60
        while not agent.server.model_calls() and time.monotonic() < deadline:
            assert runner.poll() is None, runner.communicate()
            time.sleep(0.05)
        assert agent.server.model_calls(), "the CLI never called the model"
        cancel = agent.repo.uh("mission", "cancel", "m", "--reason", "e2e")
        assert cancel.code == 0, cancel
        out, _ = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    data = json.loads(out)
    assert data["status"] == "cancelled", data
    assert live_with_marker(agent.marker) == []


def _shape(command: str) -> str:
    return re.sub(r"(sbx-m-\w+)-(TIMESTAMP|\d{14}(-\d+)?)", r"\1-TIMESTAMP", command)
