"""Harness runs from their ledgers, newest first: status, outcomes, pass rate, attempts, time,
budget, cost. The rate is ``uh_core.harness.rate``'s (``33% 1/3``: passed of judged, blocked
counting against it; ``-`` when the run judged nothing), as ``harness report`` prints it.

A run whose runner died reads ``interrupted · last seen …``, whether it left a ledger (one
saying ``running``) or died before its first (then its row has only that)."""

from __future__ import annotations

from rich.text import Text

from uh_core.workspace.state import HarnessView, LedgerView
from uh_tui import look
from uh_tui.widgets.keyed_table import KeyedTable, LazyRows, Row


class HarnessRunsTable(KeyedTable):
    COLUMNS = (
        ("run", "run"),
        ("status", "status"),
        ("started", "started"),
        ("rate", "rate"),
        ("outcomes", "outcomes"),
        ("attempts", "tries"),
        ("duration", "time"),
        ("budget", "budget"),
        ("cost", "cost"),
    )
    MAX_WIDTHS = {"budget": 30, "cost": 10}
    SHRINK = (
        "cost",
        "budget",
        "run",
        "outcomes",
        "started",
        "duration",
        "status",
        "attempts",
        "rate",
    )
    # a narrow terminal cuts cells, never a header below its whole word (80 columns: each
    # header reads, and no two read alike); an interrupted run's "· last seen …" gives way
    # before the run id, its word does not
    MIN_WIDTHS = {
        **{key: len(label) for key, label in COLUMNS},
        "run": len("harness…"),
        "status": len("⚠ interrupted…"),
        "rate": len("100% 9/9"),
    }

    def show(self, harness: HarnessView) -> None:
        runs = harness.ledgers[::-1]  # newest first; rows made only for the window shown
        gone = harness.interrupted
        lost = gone if gone and all(ledger.run_id != gone for ledger in runs) else None
        keys = ([lost] if lost else []) + [ledger.run_id for ledger in runs]

        def make(i: int) -> Row:
            if lost:
                if i == 0:
                    return _lost(lost, harness.interrupted_at)
                i -= 1
            return _row(runs[i])

        self.set_rows(LazyRows(keys, make))


def _lost(run_id: str, seen: str | None) -> Row:
    """A run interrupted before it wrote a ledger: nothing of it is known but that."""
    return (run_id, (Text(run_id, style="bold"), look.interrupted(seen), *("-",) * 7))


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


OUTCOMES = (
    ("passed", "pass", "green"),
    ("failed", "fail", "red"),
    ("blocked", "blocked", "yellow"),
    ("skipped", "skipped", "yellow"),
    ("errors", "error", "red"),
    ("budget_exhausted", "over budget", "yellow"),
    ("rate_limited", "rate limited", "yellow"),
    ("interrupted", "interrupted", "yellow"),
)


def _outcomes(ledger: LedgerView) -> Text:
    """``1 pass 2 blocked``: each outcome the run had, counted (none: ``-``)."""
    parts = [
        (f"{count} {word}", style)
        for field, word, style in OUTCOMES
        if (count := getattr(ledger, field))
    ]
    if not parts:
        return Text("-", style="dim")
    out = Text()
    for index, part in enumerate(parts):
        out.append(" " if index else "")
        out.append(*part)
    return out


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
                "",
            ),
        )
    return (
        ledger.run_id,
        (
            Text(ledger.run_id, style="bold"),
            _status(ledger),
            look.ago(ledger.started_at),
            ledger.tally.text(),
            _outcomes(ledger),
            str(ledger.attempts),
            look.duration(ledger.duration_ms),
            ledger.budget,
            _cost(ledger),
        ),
    )


def _cost(ledger: LedgerView) -> Text:
    """``$0.63``; ``unknown`` (why: the run's detail, ``harness report``); ``-``: no usage."""
    if ledger.cost_usd is not None:
        return Text(f"${ledger.cost_usd:.2f}")
    if ledger.cost.startswith("cost unknown"):
        return Text("unknown", style="yellow")
    return Text("-", style="dim")
