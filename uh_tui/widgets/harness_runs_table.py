"""Harness runs from their ledgers, newest first: status, outcomes, attempts, time, budget."""

from __future__ import annotations

from rich.text import Text

from uh_core.workspace.state import LedgerView
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
    SHRINK = ("budget", "outcomes", "rate", "attempts", "started", "duration", "run")

    def show(self, ledgers: tuple[LedgerView, ...]) -> None:
        self.set_rows([_row(ledger) for ledger in reversed(ledgers)])


def _status(ledger: LedgerView) -> Text:
    """A tampered run is the loudest thing on the screen; an unconfined one says so."""
    if ledger.tampered:
        return Text(f"⚠ TAMPERED ({len(ledger.tampered)})", style="bold white on red")
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
