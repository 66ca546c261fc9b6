"""Harness runs from their ledgers, newest first: status, outcomes, attempts, time, budget.

A run whose runner died reads ``interrupted · last seen …``, whether it left a ledger (one
saying ``running``) or died before its first (then its row has only that)."""

from __future__ import annotations

from rich.text import Text

from uh_core.workspace.state import HarnessView, LedgerView
from uh_tui import look
from uh_tui.widgets.keyed_table import KeyedTable, Row


class HarnessRunsTable(KeyedTable):
    COLUMNS = (
        ("run", "run"),
        ("status", "status"),
        ("started", "started"),
        ("outcomes", "pass/fail/skip"),
        ("rate", "pass rate"),
        ("attempts", "attempts"),
        ("duration", "time"),
        ("budget", "budget used"),
    )
    MAX_WIDTHS = {"budget": 30}
    SHRINK = ("budget", "outcomes", "rate", "attempts", "started", "duration", "status", "run")
    # an interrupted run's "· last seen …" gives way before the run id, its word does not
    MIN_WIDTHS = {"status": len("⚠ interrupted…")}

    def show(self, harness: HarnessView) -> None:
        rows = [_row(ledger) for ledger in reversed(harness.ledgers)]
        gone = harness.interrupted
        if gone and all(ledger.run_id != gone for ledger in harness.ledgers):
            rows.insert(0, _lost(gone, harness.interrupted_at))
        self.set_rows(rows)


def _lost(run_id: str, seen: str | None) -> Row:
    """A run interrupted before it wrote a ledger: nothing of it is known but that."""
    return (run_id, (Text(run_id, style="bold"), look.interrupted(seen), *("-",) * 6))


def _status(ledger: LedgerView) -> Text:
    """A tampered run is the loudest thing on the screen; an unconfined one says so."""
    if ledger.tampered:
        return Text(f"⚠ TAMPERED ({len(ledger.tampered)})", style="bold white on red")
    if ledger.status == "interrupted":  # its runner died mid-run
        shown = look.interrupted(ledger.last_seen)
    else:
        shown = look.status(ledger.status)
    if ledger.unconfined:
        shown = Text.assemble(shown, (" unconfined", "yellow"))
    return shown


def _row(ledger: LedgerView) -> Row:
    if ledger.problem:
        return (
            ledger.run_id,
            (
                Text(ledger.run_id),
                Text("⚠ unreadable", style="bold red"),
                "",
                Text(look.short(ledger.problem, 60), style="red"),
                "",
                "",
                "",
                "",
            ),
        )
    rate = ledger.pass_rate
    return (
        ledger.run_id,
        (
            Text(ledger.run_id, style="bold"),
            _status(ledger),
            look.ago(ledger.started_at),
            Text.assemble(
                (str(ledger.passed), "green"),
                "/",
                (str(ledger.failed), "red"),
                "/",
                (str(ledger.skipped), "yellow"),
            ),
            "-" if rate is None else f"{rate:.0%}",
            str(ledger.attempts),
            look.duration(ledger.duration_ms),
            ledger.budget,
        ),
    )
