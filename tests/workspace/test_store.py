"""The workspace store: following logs as they change — torn lines, truncated and replaced
logs, the TypeScript uh's spellings, malformed files, a long log opened at its end."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tui import fixtures
from uh_core.events.writer import EventLog
from uh_core.layout import Layout
from uh_core.models.events import (
    AcceptanceChecked,
    AcceptanceStarted,
    RuntimeProgress,
    VerificationStarted,
)
from uh_core.workspace.store import Store


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The dashboard's fixture workspace (tests/tui/fixtures.py), built in a private folder."""
    monkeypatch.setenv("UH_FROZEN_TIME", fixtures.FROZEN)
    root = tmp_path / "ws"
    fixtures.build(root)
    yield root


def _line(event: str, **payload: object) -> bytes:
    data = {
        "event": event,
        "timestamp": "2026-01-15T12:00:00.000Z",
        "mission_id": "divide",
        **payload,
    }
    return (json.dumps(data) + "\n").encode()


def test_a_torn_line_waits_for_its_newline(workspace: Path) -> None:
    store = Store(workspace)
    store.full()
    log = Layout(workspace).mission_events("divide")
    whole = _line("runtime.progress", runtime="epsilon", message="half and half")
    with open(log, "ab") as handle:
        handle.write(whole[:20])
    assert store.changed([log]) is None  # nothing complete yet
    with open(log, "ab") as handle:
        handle.write(whole[20:])
    update = store.changed([log])
    assert update is not None and [line.text for line in update.events] == [
        "runtime=epsilon kind=log message=half and half"
    ]


def test_a_truncated_log_is_read_again_and_folded_afresh(workspace: Path) -> None:
    store = Store(workspace)
    store.full()
    assert store.snapshot.mission("divide").live == "run epsilon"
    log = Layout(workspace).mission_events("divide")
    with open(log, "wb") as handle:  # truncated in place, then one new event
        handle.write(_line("runtime.started", runtime="zeta", run_id="r1"))
    update = store.changed([log])
    assert update is not None and update.reset == (".harness/missions/divide/events.ndjson",)
    assert store.snapshot.mission("divide").live == "run zeta"  # epsilon is gone with the old log


def test_a_replaced_log_is_read_again(workspace: Path) -> None:
    store = Store(workspace)
    store.full()
    log = Layout(workspace).mission_events("divide")
    fresh = log.with_name("events.new")
    fresh.write_bytes(log.read_bytes()[: log.read_bytes().index(b"\n") + 1])  # a new inode
    os.replace(fresh, log)
    update = store.changed([log])
    assert update is not None and update.reset
    divide = store.snapshot.mission("divide")
    assert divide.events == 1 and divide.live == "verify 0/3"  # only its first event is left


def test_typescript_spellings_and_malformed_lines(workspace: Path) -> None:
    store = Store(workspace)
    update = store.full()
    assert update is not None
    legacy = store.snapshot.mission("legacy")
    assert legacy.verdict == "passed"  # from events written with `type` and `ts`
    assert [c.status for c in legacy.criteria] == ["passed"]
    assert legacy.problems == (".harness/missions/legacy/events.ndjson: 2 malformed lines skipped",)
    assert legacy.badge == "malformed"
    unknown = [line for line in update.events if line.event == "mission.note"]
    assert unknown and "an event type this version does not know" in unknown[0].text


def test_malformed_files_are_badges_not_failures(workspace: Path) -> None:
    layout = Layout(workspace)
    layout.verification_file("add-subtract").write_text("status: [\n")
    (layout.mission_dir("divide") / "runtime-comparison.json").write_text("{not json")
    layout.sandbox_index.write_text("sandboxes: 7\n")
    store = Store(workspace)
    store.full()
    snapshot = store.snapshot
    assert snapshot.mission("broken").badge == "invalid"
    assert "YAML syntax error" in snapshot.mission("add-subtract").problems[0]
    assert (
        snapshot.mission("divide")
        .problems[0]
        .startswith(".harness/missions/divide/runtime-comparison.json")
    )
    assert snapshot.sandbox_problem and "index.yaml" in snapshot.sandbox_problem
    assert snapshot.mission("changelog").live  # the rest keeps working


def test_a_long_log_opens_at_its_end_and_folds_its_history_after(workspace: Path) -> None:
    layout = Layout(workspace)
    log = EventLog(layout.mission_events("add-subtract"), mission_id="add-subtract", run_id="long")
    log.emit(VerificationStarted(total_acceptance=1, timestamp="2026-01-15T11:59:00.000Z"))
    log.emit(
        AcceptanceStarted(
            ac_id="unit-tests", index=0, total=1, timestamp="2026-01-15T11:59:00.001Z"
        )
    )
    for n in range(3000):
        log.emit(
            RuntimeProgress(runtime="x", message=f"noise {n}", timestamp="2026-01-15T11:59:01.000Z")
        )
    log.emit(
        AcceptanceChecked(
            ac_id="unit-tests", status="failed", exit_code=1, timestamp="2026-01-15T11:59:02.000Z"
        )
    )
    store = Store(workspace, tail_lines=50, big_log=64 << 10)
    update = store.full()
    assert update is not None
    shown = [line for line in update.events if line.source == "add-subtract"]
    assert len(shown) == 50 and shown[-1].event == "acceptance.checked"
    mission = store.snapshot.mission("add-subtract")
    assert mission.catching_up is not None and mission.catching_up < 1
    assert store.busy
    rounds = 0
    while store.busy:
        store.more()
        rounds += 1
    assert rounds >= 1
    mission = store.snapshot.mission("add-subtract")
    assert mission.catching_up is None
    assert mission.verifying and mission.live == "verify 1/1"  # folded from the very start
    assert mission.events == 3003 + 8  # and the fixture's own eight


def test_an_event_written_to_two_logs_is_one_line(workspace: Path) -> None:
    """A promotion goes to the mission's log and the audit log: the events pane shows it once."""
    store = Store(workspace)
    store.full()
    layout = Layout(workspace)
    promoted = _line(
        "promotion.recorded", event_id="promotion-1", decision="promoted", approved_by="ada"
    )
    logs = [layout.mission_events("divide"), layout.audit_log]
    for log in logs:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as handle:
            handle.write(promoted)
    update = store.changed(logs)
    assert update is not None
    assert [line.event for line in update.events].count("promotion.recorded") == 1
