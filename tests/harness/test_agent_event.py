"""A harness attempt's ``runtime.finished`` tells what the ledger tells: an agent that ended
well but changed nothing is ``no_change`` in both; one that changed files is ``succeeded``
with its diff."""

from __future__ import annotations

from tests.harness.conftest import Project


def _finished(project: Project) -> list[dict[str, object]]:
    events = project.events(".harness/missions/calc/events.ndjson")
    kinds = [e["event"] for e in events]
    finished = [e for e in events if e["event"] == "runtime.finished"]
    # before the gate's stages
    first_gate = kinds.index("harness.gate.checked")
    assert all(events.index(event) < first_gate for event in finished)
    return finished


def test_an_agent_that_changed_nothing_is_no_change_in_event_and_ledger(project: Project) -> None:
    idle = project.agent("idle", "print('nothing to do')\n")
    _result, data = project.run_json("--agent", idle, "--max-attempts", "1", "--isolation", "none")
    attempt = data["requirements"][0]["attempts"][0]
    assert attempt["stage"] == "agent" and attempt["verdict"].startswith("red at agent: no_change")
    (event,) = _finished(project)
    assert event["status"] == "no_change" and event["files_changed"] == 0
    assert event["exit_code"] == 0 and "changed nothing" in str(event["reason"])


def test_an_agent_that_changed_files_is_succeeded_with_its_diff(project: Project) -> None:
    good = project.agent("good", 'write("src/calc.py", GOOD)\n')
    _result, data = project.run_json("--agent", good, "--isolation", "none")
    attempt = data["requirements"][0]["attempts"][0]
    (event,) = _finished(project)
    assert event["status"] == "succeeded" and event["files_changed"] == 1
    assert event["diff_hash"] == attempt["diff_hash"]
