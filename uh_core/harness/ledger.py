"""The one reader and writer of ``.harness/runs/<run-id>.json`` (uh.harness-run.v0)."""

from __future__ import annotations

from pathlib import Path

import pydantic

from uh_core.errors import NotFoundError, UhError, ValidationError
from uh_core.fileio import write_json
from uh_core.harness.costs import summarize
from uh_core.harness.rate import tally
from uh_core.layout import Layout
from uh_core.models.ledger import HarnessLedger, Totals
from uh_core.yamllimits import loads_json, read_capped


def ledger_path(layout: Layout, run_id: str) -> Path:
    from uh_core.ids import check_id

    return layout.ledgers_dir / f"{check_id(run_id, 'run')}.json"


def totals(ledger: HarnessLedger) -> Totals:
    counted = tally(r.outcome for r in ledger.requirements)  # the pass rate's one rule
    return Totals(
        missions=len(ledger.requirements),
        **counted.as_dict(),
        attempts=sum(len(r.attempts) for r in ledger.requirements),
        duration_ms=sum(r.duration_ms for r in ledger.requirements),
    )


def write_ledger(layout: Layout, ledger: HarnessLedger) -> Path:
    """Totals recomputed, then the whole file replaced (a reader never sees half of it)."""
    ledger.totals = totals(ledger)
    ledger.usage = summarize(ledger.requirements)
    path = ledger_path(layout, ledger.run_id)
    write_json(path, ledger.model_dump(mode="json"))
    return path


def read_ledger(path: Path) -> HarnessLedger:
    try:
        raw = read_capped(path)
    except FileNotFoundError:
        raise NotFoundError(f"{path}: no such ledger") from None
    except (OSError, ValueError) as exc:  # a YamlLimitError (over the cap) is a ValueError
        raise ValidationError([f"{path}: not a readable ledger: {exc}"]) from None
    try:  # pydantic-core's own parser: half the time of json.loads and model_validate
        return HarnessLedger.model_validate_json(raw)
    except pydantic.ValidationError:
        pass  # not a ledger: read again the usual way, whose errors name what is wrong
    try:
        data = loads_json(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValidationError([f"{path}: not a readable ledger: {exc}"]) from None
    try:
        return HarnessLedger.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ValidationError([f"{path}: {exc.errors()[0]['msg']}"]) from None


def list_ledgers(layout: Layout) -> list[Path]:
    """Every ledger, oldest first (run ids sort by time)."""
    if not layout.ledgers_dir.is_dir():
        return []
    return sorted(layout.ledgers_dir.glob("*.json"))


def read_all(layout: Layout) -> tuple[list[HarnessLedger], list[str]]:
    """Every readable ledger, oldest run first, and one line for each that is not."""
    ledgers, unreadable = [], []
    for path in list_ledgers(layout):
        try:
            ledgers.append(read_ledger(path))
        except UhError as exc:
            unreadable.append(exc.one_line())
    ledgers.sort(key=lambda ledger: ledger.started_at)
    return ledgers, unreadable
