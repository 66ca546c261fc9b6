"""The one reader and writer of ``promotion.yaml``, and the ``promotion.*`` events.

``promotion.yaml`` holds the latest decision at the top level and every earlier one in
``history`` (oldest first). Every event goes to the mission's log and to the audit log, through
the one NDJSON writer, so ``uh-core tail`` shows it live and the audit log alone is a complete
trail of every decision in the project.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from uh_core.compat.readers import load_promotion
from uh_core.errors import UhError
from uh_core.events.writer import EventLog, append_event
from uh_core.fileio import write_yaml
from uh_core.layout import Layout
from uh_core.models.events import BaseEvent, PromotionRecorded
from uh_core.models.promotion import PromotionDecision, PromotionRecord


def read_promotion(layout: Layout, mission_id: str) -> PromotionRecord | None:
    """The mission's promotion record, or None when nothing was decided yet.

    A file that does not parse raises ``ValidationError`` (exit 2) naming it."""
    path = layout.promotion_file(mission_id)
    if not path.is_file():
        return None
    return load_promotion(path, layout.rel(path))


def latest_verdict(
    verdict: str | None, at: str | None, promotion: PromotionDecision | None
) -> tuple[str | None, str | None]:
    """The mission's latest verdict on the main checkout: a promotion onto it is, until a
    verification after it (``promoted``, at the decision's time). Other decisions change no
    code and are no verdict; a verify in progress stays ``running``."""
    if promotion is None or promotion.decision != "promoted" or verdict == "running":
        return verdict, at
    if at is None or _instant(promotion.promoted_at) >= _instant(at):
        return "promoted", promotion.promoted_at
    return verdict, at


def _instant(stamp: str) -> float:
    from uh_core.clock import parse_timestamp

    try:
        return parse_timestamp(stamp).timestamp()
    except ValueError:
        return 0.0


def _document(record: PromotionRecord) -> dict[str, Any]:
    data = record.model_dump(mode="json", exclude_none=True)  # the TypeScript uh rejects nulls
    return {"schema_version": data.pop("schema_version"), **data}


def write_decision(
    layout: Layout, decision: PromotionDecision, previous: PromotionRecord | None
) -> PromotionRecord:
    """``decision`` on top, ``previous`` (latest and history) kept below it; written whole."""
    history = previous.decisions() if previous is not None else []
    record = PromotionRecord.model_validate({**decision.model_dump(), "history": history})
    write_yaml(layout.promotion_file(decision.mission_id), _document(record))
    return record


def emit(layout: Layout, mission_id: str, event: BaseEvent) -> BaseEvent:
    """``event`` in the mission's log and in the audit log (one line each, same content)."""
    EventLog(layout.mission_events(mission_id), mission_id=mission_id).emit(event)
    return append_event(layout.audit_log, event)


def emit_recorded(layout: Layout, record: PromotionRecord) -> BaseEvent:
    event = PromotionRecorded(
        run_id=record.audit_event_id,
        event_id=record.audit_event_id,
        decision=record.decision,
        approved_by=record.approved_by,
        source=record.source,
        sandbox_id=record.sandbox_id,
        branch=record.branch,
        runtime=record.runtime,
        changes=record.changes,
        commit=record.commit,
        verification_status=record.verification_status,
        forced=record.forced,
        auto=record.auto,
        artifact=layout.rel(layout.promotion_file(record.mission_id)),
    )
    return emit(layout, record.mission_id, event)


@contextmanager
def promotion_lock(layout: Layout) -> Iterator[None]:
    """One promotion at a time in a project: each reads HEAD, then moves it."""
    path = layout.promotion_lock
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise UhError(f"cannot lock {layout.rel(path)}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
