"""The gate's pass rate over harness runs, as a sparkline with its numbers beside it."""

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
        rates = list(harness.pass_rates)
        runs = len(harness.ledgers)
        if rates:
            label = (
                f"pass rate {rates[-1]:.0%} last · {sum(rates) / len(rates):.0%} over {runs} runs"
            )
        else:
            label = "no harness runs yet: press h" if not runs else f"{runs} runs, none judged"
        if harness.running:
            used = f" ({harness.running_budget})" if harness.running_budget not in ("", "-") else ""
            label = f"● {look.short(harness.running, 34)} running{used} · " + label
        self.query_one("#pass-rate-label", Static).update(label)
        line = self.query_one("#pass-rate-line", Sparkline)
        # a sparkline scales to its own min and max: with fewer than two runs it would draw
        # a full bar whatever the rate, so the label alone says it
        line.display = len(rates) >= 2
        line.data = rates or [0.0]
