"""The gate's pass rate over harness runs, as a sparkline with its numbers beside it.

The rate is ``uh_core.harness.rate``'s (as ``harness report`` and ``uh-core status --json``
have it): passed / judged, blocked missions counting against it; a run that judged nothing
has none (``-``), and "last run" is the newest run, whether it judged anything or not."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Sparkline, Static

from uh_core.workspace.state import HarnessView
from uh_tui import look


class PassRate(Horizontal):
    def compose(self) -> ComposeResult:
        yield Static(id="pass-rate-label")
        yield Sparkline([], id="pass-rate-line")

    def show(self, harness: HarnessView) -> None:
        self.query_one("#pass-rate-label", Static).update(label(harness))
        rates = list(harness.pass_rates)
        line = self.query_one("#pass-rate-line", Sparkline)
        # a sparkline scales to its own min and max: with fewer than two runs it would draw
        # a full bar whatever the rate, so the label alone says it
        line.display = len(rates) >= 2
        line.data = rates or [0.0]


def label(harness: HarnessView) -> str:
    """One line, the most useful first (a small terminal cuts its end): the run in progress
    and its budget (or the latest run, interrupted, and when it was last seen), the pass
    rate, then the run's id."""
    runs = len(harness.ledgers)
    latest, overall = harness.latest, harness.overall
    if latest is not None and overall.rate is not None:
        last = latest.tally.text()
        rate = f"pass rate: last run {last if last != '-' else '- (nothing judged)'}"
        rate += f" · all {look.plural(runs, 'run')} {overall.text()}"
    elif runs:
        rate = f"{look.plural(runs, 'run')}, none judged"
    else:
        rate = "" if harness.running or harness.interrupted else "no harness runs yet: press h"
    if harness.interrupted and not harness.running:  # the latest run's runner died mid-run
        gone = f"⚠ harness run interrupted · {look.last_seen(harness.interrupted_at)}"
        return " · ".join(
            part for part in (gone, rate, look.short(harness.interrupted, 40)) if part
        )
    if not harness.running:
        return rate
    used = f" ({harness.running_budget})" if harness.running_budget not in ("", "-") else ""
    live = f"● harness run in progress{used}" + ("" if runs else ": the first")
    return " · ".join(part for part in (live, rate, look.short(harness.running, 40)) if part)
