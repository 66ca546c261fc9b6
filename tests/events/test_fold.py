"""The folds keep each running state's owner and when its run was last seen; they read no
process (the workspace asks whether the owner lives)."""

from __future__ import annotations

import json

from uh_core.events.fold import AuditFold, MissionFold
from uh_core.events.reader import parse_event
from uh_core.models.events import (
    AcceptanceStarted,
    BaseEvent,
    HarnessAttemptStarted,
    HarnessRequirementStarted,
    HarnessRunStarted,
    Owner,
    RuntimeProgress,
    RuntimeStarted,
    VerificationStarted,
)

OWNER = Owner(pid=4242, start_time=777, host="build-1")


def _fold(*events: BaseEvent) -> MissionFold:
    fold = MissionFold("m")
    for event in events:
        fold.apply(event)
    return fold


def _parsed(event: BaseEvent) -> BaseEvent:
    """Through the log's text and back, as every reader sees it."""
    parsed = parse_event(event.model_dump_json())
    assert parsed is not None
    return parsed


def test_verify_owner_and_last_seen() -> None:
    fold = _fold(
        _parsed(VerificationStarted(run_id="v1", timestamp="T1", total_acceptance=2, owner=OWNER)),
        _parsed(AcceptanceStarted(run_id="v1", timestamp="T2", ac_id="a")),
        _parsed(RuntimeProgress(run_id="other", timestamp="T9", runtime="x")),  # not verify's
    )
    state = fold.verify
    assert state.running and state.verify_owner == OWNER and state.verify_seen == "T2"


def test_runtime_and_harness_owners_and_last_seen() -> None:
    fold = _fold(
        RuntimeStarted(run_id="sbx1", timestamp="T1", runtime="alpha", owner=OWNER),
        RuntimeProgress(run_id="sbx1", timestamp="T3", runtime="alpha", message="hi"),
        HarnessRequirementStarted(run_id="h1", timestamp="T4", branch="harness/m", owner=OWNER),
        HarnessAttemptStarted(run_id="h1", timestamp="T5", attempt=1),
        # the harness's agent: no owner of its own, its events show the run alive
        RuntimeStarted(run_id="h1", timestamp="T6", runtime="agent"),
        RuntimeProgress(run_id="h1", timestamp="T7", runtime="agent", message="working"),
    )
    alpha, agent = fold.runtimes["alpha"], fold.runtimes["agent"]
    assert alpha.owner == OWNER and alpha.seen == "T3"
    assert agent.owner is None and agent.seen == "T7"
    assert fold.harness is not None
    assert fold.harness.owner == OWNER and fold.harness.seen == "T7"


def test_audit_owner_and_last_seen() -> None:
    audit = AuditFold()
    audit.apply(HarnessRunStarted(run_id="h1", timestamp="T1", missions=["m"], owner=OWNER))
    audit.apply(BaseEvent(event="harness.budget.checked", run_id="h1", timestamp="T2"))
    audit.apply(BaseEvent(event="something.else", run_id="h0", timestamp="T3"))
    assert audit.owner == OWNER and audit.seen == "T2" and not audit.finished


def test_old_logs_without_owner_and_foreign_owners_stay_readable() -> None:
    old = parse_event(json.dumps({"event": "verification.started", "total_acceptance": 3}))
    assert isinstance(old, VerificationStarted) and old.owner is None
    for owner in ({"pid": "not a pid"}, "pid 12", [1, 2], {"host": "x"}):
        line = json.dumps({"event": "verification.started", "total_acceptance": 3, "owner": owner})
        event = parse_event(line)
        # the event is still typed (its count is kept); only the owner is dropped
        assert isinstance(event, VerificationStarted) and event.total_acceptance == 3
        assert event.owner is None
    extra = parse_event(
        json.dumps({"event": "runtime.started", "owner": {"pid": 5, "container": "c1"}})
    )
    assert isinstance(extra, RuntimeStarted) and extra.owner is not None
    assert extra.owner.pid == 5 and extra.owner.start_time is None


def test_owner_here_is_this_process() -> None:
    import os
    import socket

    here = Owner.here()
    assert here.pid == os.getpid() and here.host == socket.gethostname()
    assert isinstance(here.start_time, int)
