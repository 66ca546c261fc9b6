"""Steering an agent at work (``uh-core mission steer``): real harness runs, a scripted agent
that waits for the operator, and the message delivered by continuing it in the same sandbox
(uh_core.harness.steer, uh_core.runtime.steering)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import git
from tests.harness.conftest import Project

# Its first turn leaves a helper and a wrong add, says it is at work, and waits for the test
# to let it end; a turn continued with the operator's steering follows it.
AGENT = """
ready, go = pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
steering = os.environ.get("UH_STEERING")
if steering is None:
    write("src/helper.py", "HELPER = 1\\n")
    write("src/calc.py", BAD)
    ready.write_text("at work")
    for _ in range(1200):
        if go.exists():
            break
        time.sleep(0.05)
elif "use the plus operator" in steering and "## The operator's steering" in prompt:
    assert pathlib.Path("src/helper.py").exists(), "the first turn's tree is gone"
    write("src/calc.py", GOOD)
    write("tests/test_calc.py", pathlib.Path("tests/test_calc.py").read_text() + "\\n")
print("UH_FINAL: done")
"""


def _wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def _events(project: Project, kind: str) -> list[dict[str, Any]]:
    return [e for e in project.events(".harness/missions/calc/events.ndjson") if e["event"] == kind]


def test_a_running_agent_is_steered_and_continues_in_its_sandbox(project: Project) -> None:
    before = project.snapshot()
    ready, go = project.agents / "ready", project.agents / "go"
    agent = project.agent("steered", "import time\n" + AGENT)
    agent = agent.replace("{prompt_file}", f"{{prompt_file}} {ready} {go}")
    run = project.repo.start(
        "harness", "run", "--agent", agent, "--json", stderr=subprocess.PIPE
    )  # fmt: skip
    try:
        _wait_for(ready)
        # two messages in a row, while its turn goes on: both reach the continued turn
        first = project.repo.uh("mission", "steer", "calc", "think about it", "--by", "ana")
        assert first.code == 0, first.stderr
        assert first.stdout.startswith("sent to agent on calc in harness run harness-")
        assert "(attempt 1): it is ran again in the same sandbox" in first.stdout
        second = project.repo.uh("mission", "steer", "calc", "use the plus operator", "--json")
        assert second.code == 0, second.stderr
        sent = json.loads(second.stdout)
        assert sent["runtime"] == "agent" and sent["event"]["event"] == "steering.message"
        go.write_text("go")
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    data = json.loads(out)
    [record] = data["requirements"]
    assert run.returncode == 0 and record["outcome"] == "pass", err
    [attempt] = record["attempts"]  # one round: the steering continued it, not a retry
    agent_record = attempt["agent"]
    assert agent_record["continued"] == 1
    assert [s["message"] for s in agent_record["steered"]] == [
        "think about it",
        "use the plus operator",
    ]
    assert agent_record["steered"][0]["by"] == "ana"
    assert all(s["delivered"] for s in agent_record["steered"])
    assert "UH_STEERING" in agent_record["steered"][0]["delivery"]
    assert project.show(record["branch"], "src/helper.py") == "HELPER = 1\n"  # kept
    assert "return a + b" in project.show(record["branch"], "src/calc.py")
    # in the mission's log: each message as sent, then as delivered, in order
    asked = _events(project, "steering.message")
    assert [e["message"] for e in asked] == ["think about it", "use the plus operator"]
    assert {e["run_id"] for e in asked} == {data["run_id"]}
    delivered = _events(project, "runtime.steered")
    assert [(e["message"], e["attempt"], e["delivered"]) for e in delivered] == [
        ("think about it", 1, True),
        ("use the plus operator", 1, True),
    ]
    started = _events(project, "runtime.started")
    assert len(started) == 2  # the continued turn is a launch of its own (--resume stops it)
    assert project.snapshot() == before  # the main checkout, untouched
    promoted = project.repo.uh(
        "promote", "calc", "--branch", record["branch"], "--approved-by", "bo"
    )  # fmt: skip
    assert promoted.code == 0, promoted.stderr
    body = git(project.root, "log", "-1", "--format=%B")
    assert "Uh-Steered: 2\n" in body  # the reviewer sees a human steered it

    # the run has ended: nothing to steer, nothing written
    written = len(project.events(".harness/missions/calc/events.ndjson"))
    late = project.repo.uh("mission", "steer", "calc", "one more thing")
    assert late.code == 2 and "nothing is working on calc now" in late.stderr
    assert "harness answer calc" in late.stderr  # the fix names what a handed-over one needs
    assert len(project.events(".harness/missions/calc/events.ndjson")) == written


def test_what_cannot_be_steered_is_refused_before_anything_is_sent(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uh_core.errors import HarnessError
    from uh_core.harness import cancel, steer
    from uh_core.layout import Layout
    from uh_core.runtime.active import HarnessActive

    layout = Layout(project.root)
    for args, expected in {
        ("steer", "nosuch", "hint"): "nosuch",
        ("steer", "calc", "  "): "the message is empty",
        ("steer", "calc"): "no text given",
        ("steer", "calc", "x" * 8001): "at most 8,000 are sent",
    }.items():
        done = project.repo.uh("mission", *args)
        assert done.code == 2 and expected in done.stderr, (args, done.stderr)
    # a run working on it whose agent is a CLI uh cannot continue yet (one running here is
    # found by its registration, as in the first test; this one is stood in for)
    run = HarnessActive("harness-x", 1, None, "here", "t", ["calc"], "calc", 1, {"calc": 1})
    run.runtime = "hermes"
    working = cancel.Live(project.root / "reg.json", run, elsewhere=False)
    monkeypatch.setattr(cancel, "on_mission", lambda *_: ([working], []))
    with pytest.raises(HarnessError, match="runtime hermes cannot be steered"):
        steer.send_steering(layout, "calc", "use a + b", "ana")
    run.runtime, run.executor = "agent", "ray"  # its agent runs on another node
    with pytest.raises(HarnessError, match="runs its agents on a Ray cluster"):
        steer.send_steering(layout, "calc", "use a + b", "ana")
    assert steer.steer_by(layout, "agent") is not None  # an --agent command can be
    log = layout.mission_events("calc")
    assert not log.exists() or "steering.message" not in log.read_text()
