"""Each harness run's ledger as the rows every reader shows: the run, and its missions.

``derive(ledger)`` is the one rule from a ledger (``.harness/runs/*.json``, read by
``uh_core.harness.ledger.read_ledger``) to a ``LedgerEntry``: the run's ``LedgerView`` and,
per mission, its outcome and ``RequirementView``. ``LedgerRows`` keeps those entries by the
ledger's signature, in memory and in the derived index (``uh_core.workspace.index``), so a
start reads no ledger whose entry is known and holds rows, not parsed ledgers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from uh_core.harness.rate import tally
from uh_core.layout import Layout
from uh_core.workspace.state import LedgerView, RequirementView

if TYPE_CHECKING:  # the ledger models are imported with the first ledger (not before a
    # dashboard's first frame, in a project that has never run the harness)
    from uh_core.models.ledger import HarnessLedger, RequirementRecord
    from uh_core.workspace.ledger_rows import LedgerRows


@dataclass(frozen=True)
class LedgerEntry:
    """One ledger as rows: the run, and (mission, outcome, its row) per mission, in order."""

    run: LedgerView
    requirements: tuple[tuple[str, str, RequirementView], ...] = ()


@dataclass(frozen=True)
class Ledgers:
    """What the ledgers on disk say: runs oldest first, outcomes per mission, the latest."""

    runs: tuple[LedgerView, ...] = ()
    history: dict[str, tuple[str, ...]] = field(default_factory=dict)
    latest: dict[str, RequirementView] = field(default_factory=dict)


def ledger_paths(layout: Layout) -> list[Path]:
    """``runs/*.json``, sorted as ``sorted(folder.glob("*.json"))`` sorts them: by name (one
    folder), each name compared as text before any Path is made (two thousand ledgers)."""
    folder = layout.ledgers_dir
    try:
        names = os.listdir(folder)
    except OSError:  # none, not a folder, unreadable: no ledgers, as glob has it
        return []
    return [folder / name for name in sorted(names) if name.endswith(".json")]


def derive(ledger: HarnessLedger) -> LedgerEntry:
    """The rows one ledger gives: its run, and each mission's outcome and row."""
    totals = ledger.totals
    counts = tally(r.outcome for r in ledger.requirements)  # the one rule's counts
    run = LedgerView(
        ledger.run_id,
        status=ledger.status,
        started_at=ledger.started_at,
        passed=counts.passed,
        failed=counts.failed,
        skipped=counts.skipped,
        blocked=counts.blocked,
        errors=counts.errors,
        attempts=totals.attempts,
        duration_ms=totals.duration_ms,
        budget=budget_text(ledger.budget),
        last_seen=_progress_at(ledger) if ledger.status == "running" else None,
        tampered=tuple(ledger.tampered),
        unconfined=next((h.removeprefix("none: ") for h in ledger.isolation if h != "bwrap"), None),
        budget_exhausted=counts.budget_exhausted,
        rate_limited=counts.rate_limited,
        interrupted=counts.interrupted,
        **spend_values(ledger.usage.get("run") or {}),
    )
    rows = tuple(
        (record.mission_id, _outcome(record), _requirement(ledger, record))
        for record in ledger.requirements
    )
    return LedgerEntry(run, rows)


def read_ledgers(layout: Layout, rows: LedgerRows, budget_s: float | None = None) -> Ledgers:
    """Every ledger's rows, oldest run first; the latest row per mission (with
    ``budget_s``, maybe not every ledger yet: ``rows.pending``)."""
    return rows.ledgers(ledger_paths(layout), budget_s)


def aggregate(entries: list[LedgerEntry]) -> Ledgers:
    """The runs in order, each mission's outcomes over them, and its latest row: the newest
    that is not a skip, unless it was only ever skipped (a run that found ``harness/<id>``
    already there skips it; the green on that branch is still its latest outcome)."""
    runs: list[LedgerView] = []
    history: dict[str, list[str]] = {}
    latest: dict[str, RequirementView] = {}
    for entry in entries:
        runs.append(entry.run)
        for mission_id, outcome, view in entry.requirements:
            history.setdefault(mission_id, []).append(outcome)
            if outcome != "skipped" or latest.get(mission_id, view).outcome == "skipped":
                latest[mission_id] = view
    return Ledgers(tuple(runs), {k: tuple(v) for k, v in history.items()}, latest)


def cost_text(block: Mapping[str, Any]) -> str:
    """``$0.6300``, ``cost unknown: <why>``, or ``-`` when no agent reported usage."""
    if not block.get("models"):
        return "-"
    if block.get("cost_usd") is not None:
        return f"${block['cost_usd']:.4f}"
    return "cost unknown: " + "; ".join(block.get("cost_unknown") or [])


def spend_values(block: Mapping[str, Any]) -> dict[str, Any]:
    """A ledger's ``usage`` block as ``LedgerView`` fields."""
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
    values: dict[str, Any] = {key: int(block.get(key) or 0) for key in keys}
    values["cost_usd"] = block.get("cost_usd") if block.get("models") else None
    values["cost"] = cost_text(block)
    return values


def _progress_at(ledger: HarnessLedger) -> str:
    """The latest time a ledger records: its start or a mission's end."""
    return max([ledger.started_at, *(r.finished_at or "" for r in ledger.requirements)])


def budget_text(budget: dict[str, Any]) -> str:
    """``12s of 600s · 2 of 3 missions`` from a harness budget (limits and use); the noun
    agrees with the limit (``0 of 1 mission``)."""
    parts = []
    seconds = budget.get("budget_seconds")
    if isinstance(seconds, int | float) and seconds:
        parts.append(f"{float(budget.get('elapsed_s') or 0):.0f}s of {seconds:g}s")
    limit = budget.get("max_requirements")
    if isinstance(limit, int) and limit:
        noun = "mission" if limit == 1 else "missions"
        parts.append(f"{budget.get('started') or 0} of {limit} {noun}")
    return " · ".join(parts) or "-"


def _budget(ledger: HarnessLedger, record: RequirementRecord) -> str:
    """What this mission used: its time, against the run's time budget when there was one."""
    used = f"{record.duration_ms / 1000:.0f}s"
    seconds = ledger.budget.get("budget_seconds")
    if isinstance(seconds, int | float) and seconds:
        return f"{used} of {seconds:g}s"
    return used if record.duration_ms else "-"


def _requirement(ledger: HarnessLedger, record: RequirementRecord) -> RequirementView:
    failing = record.failing_stage
    if (
        failing is None
        and record.outcome in ("fail", "blocked", "budget_exhausted")
        and record.attempts
    ):
        failing = record.attempts[-1].stage
    return RequirementView(
        record.mission_id,
        ledger.run_id,
        _outcome(record),
        attempts=len(record.attempts),
        max_attempts=ledger.settings.max_attempts,
        failing_stage=failing,
        branch=record.branch,
        duration_ms=record.duration_ms,
        budget=_budget(ledger, record),
        reason=_review(record) or record.reason,
        handover=_handover(record),
        notes=_notes(record),
        promote=_promote(record),
        fail_to_pass=_proof(record),
        **_spend(ledger, record),
    )


def _proof(record: RequirementRecord) -> str | None:
    from uh_core.models.ledger import fail_to_pass_of  # lazily, as the ledger models are

    proof = fail_to_pass_of(record.attempts[-1].stages) if record.attempts else None
    return proof.line() if proof is not None else None


def _spend(ledger: HarnessLedger, record: RequirementRecord) -> dict[str, Any]:
    block = (ledger.usage.get("missions") or {}).get(record.mission_id) or {}
    tokens = int(block.get("input_tokens") or 0) + int(block.get("output_tokens") or 0)
    return {"tokens": tokens, "cost": cost_text(block)}


def _outcome(record: RequirementRecord) -> str:
    """A green whose diff has lines with a shape of judge tampering reads ``needs review``."""
    return "needs review" if record.outcome == "pass" and record.review else record.outcome


def _review(record: RequirementRecord) -> str | None:
    if _outcome(record) != "needs review":
        return None
    from uh_core.judge.scan import headline

    return headline(record.review, 1)


def _handover(record: RequirementRecord) -> tuple[str, ...]:
    if not record.handover:
        return ()
    from uh_core.harness.summary import handover_lines

    return tuple(handover_lines(record.handover, ""))


def _notes(record: RequirementRecord) -> tuple[str, ...]:
    from uh_core.harness.summary import notes

    return tuple(notes(record))


def _promote(record: RequirementRecord) -> str | None:
    if record.outcome != "pass":
        return None
    from uh_core.harness.summary import promote_command

    return promote_command(record)
