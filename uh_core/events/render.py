"""Events as one readable line each, for ``uh-core tail`` and plain CI logs."""

from __future__ import annotations

import json

from uh_core.models.events import (
    AcceptanceChecked,
    AcceptanceStarted,
    BaseEvent,
    CheckChecked,
    DiffCaptured,
    HarnessHandoverAnswered,
    ProjectInitialized,
    PromotionAutoFailed,
    PromotionAutoTriggered,
    PromotionRecorded,
    RuntimeSteered,
    SandboxHumanChanged,
    SteeringMessage,
    VerificationFinished,
    VerificationStarted,
)
from uh_core.shown import LINE, clip, plural


def _outcome(exit_code: int | None, duration_ms: int, timed_out: bool) -> str:
    code = "timed out" if timed_out else f"exit {exit_code}" if exit_code is not None else "-"
    return f"({code}, {duration_ms} ms)"


def _said(text: str) -> str:
    """A human's message on one line, quoted and bounded."""
    return '"' + clip(" ".join(text.split()), 200) + '"'


def describe(event: BaseEvent) -> str:
    if (
        isinstance(event, VerificationStarted)
        and (event.model_extra or {}).get("totals_known") is False
    ):
        return "started"  # the TypeScript uh logs no totals: unknown, not zero
    if isinstance(event, VerificationStarted):
        extra = f", repeat {event.repeat}" if event.repeat > 1 else ""
        checks, criteria = (
            plural(event.total_checks, "check"),
            plural(event.total_acceptance, "criterion"),
        )
        return f"{checks}, {criteria}{extra}"
    if isinstance(event, CheckChecked):
        return f"{event.name}: {event.status} " + _outcome(
            event.exit_code, event.duration_ms, event.timed_out
        )
    if isinstance(event, AcceptanceStarted):
        return f"{event.ac_id} [{event.index + 1}/{event.total}]"
    if isinstance(event, AcceptanceChecked):
        tags = [event.severity] + (["synthetic"] if event.synthetic else [])
        tags += ["flaky"] if event.flaky else []
        return f"{event.ac_id}: {event.status} [{', '.join(tags)}] " + _outcome(
            event.exit_code, event.duration_ms, event.timed_out
        )
    if isinstance(event, VerificationFinished):
        acc = event.summary.get("acceptance", {}) if isinstance(event.summary, dict) else {}
        counts = ", ".join(f"{k}={v}" for k, v in acc.items() if v)
        if "checks_total" in (event.model_extra or {}):  # the TypeScript uh's totals
            checks = event.summary.get("checks", {}).get("total", 0)
            counts = f"checks={checks}, " + (counts or "total=0")
        return f"{event.status.upper()} {counts}".rstrip()
    if isinstance(event, DiffCaptured):
        return (
            f"{event.path}: {plural(event.files, 'file')}, {plural(event.bytes, 'byte')} "
            f"against {event.base}"
        )
    if isinstance(event, ProjectInitialized):
        return "created " + ", ".join(event.created)
    if isinstance(event, PromotionRecorded):
        what = event.sandbox_id or event.branch or "-"
        tags = [event.verification_status] + (["forced"] if event.forced else [])
        tags += ["auto"] if event.auto else []
        commit = f" as {event.commit[:12]}" if event.commit else ""
        shown_tags = f" [{', '.join(t for t in tags if t)}]" if any(tags) else ""
        return (
            f"{event.decision} {what}{commit} ({len(event.changes)} path(s)) by "
            f"{event.approved_by}{shown_tags}"
        )
    if isinstance(event, PromotionAutoTriggered) and not event.sandbox_id and not event.branch:
        decision = (event.model_extra or {}).get("decision", "-")  # the TypeScript uh's
        return f"verify passed, {decision} (auto-on-verify)"
    if isinstance(event, PromotionAutoTriggered) and event.branch:
        return f"{event.branch}: the gate passed, promoting (--promote-green)"
    if isinstance(event, PromotionAutoTriggered):
        return f"{event.sandbox_id}: verify {event.verify_run_id} passed, promoting"
    if isinstance(event, PromotionAutoFailed):
        return f"{event.sandbox_id or event.branch}: not promoted: {event.reason}"
    if isinstance(event, SteeringMessage):
        who = f" by {clip(event.by, 80)}" if event.by else ""
        return f"to {clip(event.runtime, 80)}{who}: {_said(event.message)}"
    if isinstance(event, RuntimeSteered):
        state = "delivered" if event.delivered else "NOT delivered"
        return f"{state} to {clip(event.runtime, 80)}: {_said(event.message)} — {event.delivery}"
    if isinstance(event, SandboxHumanChanged):
        return (
            f"{event.sandbox_id}: {clip(event.by, 80)} changed {plural(len(event.files), 'file')}"
            f" (+{event.added} -{event.removed}) by hand: {event.patch}"
        )
    if isinstance(event, HarnessHandoverAnswered):
        return f"answered by {clip(event.by, 80)}: {_said(event.answer)}"
    payload = {
        k: v
        for k, v in event.model_dump(mode="json").items()
        if k not in _NOT_SHOWN and v not in (None, "", [], {})
    }
    return " ".join(f"{k}={' '.join(clip(_value(v)).split())}" for k, v in payload.items())


# the line's own columns, and processes' identities (pid, start time, host: for liveness
# and cancels, in `tail --json`), which read as noise in a line
_NOT_SHOWN = frozenset({"event", "timestamp", "mission_id", "run_id", "owner", "agent"})


def _value(value: object) -> str:
    """A field's value as text: JSON for a list or mapping (never Python's repr)."""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def render_line(event: BaseEvent, source: str | None = None) -> str:
    who = event.mission_id or source or "-"
    stamp = event.timestamp or "-"
    return clip(f"{stamp}  {clip(who, 80):<24} {event.event:<28} {describe(event)}", LINE).rstrip()
