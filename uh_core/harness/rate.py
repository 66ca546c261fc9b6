"""The pass rate of a harness run: one rule, used by every reader of the ledgers.

The run summary, ``harness report`` (text and JSON), ``uh-core status --json`` (and so
MCP) and the dashboard all count a run's missions here:

- **judged**: the missions the gate ruled on — ``pass`` (a green that needs review
  included), ``fail`` and ``blocked`` (handed over to a human, or promised what nothing
  checks). A blocked mission did not pass: it counts against the rate.
- **not judged**: ``skipped`` (never started: budget, branch, status, plan blocker),
  ``error`` (ended without a verdict, e.g. a lost worker) and ``budget_exhausted`` (an
  attempt not started: its expected cost would pass a ``budget_usd``) and ``rate_limited``
  (a provider's limit outlasted the run) and ``interrupted`` (the operator stopped the run
  before the mission's gate ruled: ``--resume`` goes on, not charged).
- **rate** = passed / judged; a run that judged nothing has no rate (``None``, shown ``-``).

Pure and light (no model import): ``uh_core.workspace`` builds the dashboard's values with
it before any ledger model is loaded.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

JUDGED = ("pass", "fail", "blocked")


@dataclass(frozen=True)
class Tally:
    """A run's missions by outcome, and its pass rate."""

    passed: int = 0
    failed: int = 0
    blocked: int = 0
    skipped: int = 0
    errors: int = 0
    budget_exhausted: int = 0
    rate_limited: int = 0
    interrupted: int = 0

    @property
    def judged(self) -> int:
        return self.passed + self.failed + self.blocked

    @property
    def rate(self) -> float | None:
        """passed / judged; ``None`` when the run judged nothing."""
        return self.passed / self.judged if self.judged else None

    def text(self) -> str:
        """``33% 1/3`` (passed of judged), or ``-`` when nothing was judged."""
        if self.rate is None:
            return "-"
        return f"{percent(self.rate)} {self.passed}/{self.judged}"

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            self.passed + other.passed,
            self.failed + other.failed,
            self.blocked + other.blocked,
            self.skipped + other.skipped,
            self.errors + other.errors,
            self.budget_exhausted + other.budget_exhausted,
            self.rate_limited + other.rate_limited,
            self.interrupted + other.interrupted,
        )

    def as_dict(self) -> dict[str, Any]:
        rate = self.rate
        return {
            "passed": self.passed,
            "failed": self.failed,
            "blocked": self.blocked,
            "skipped": self.skipped,
            "errors": self.errors,
            "budget_exhausted": self.budget_exhausted,
            "rate_limited": self.rate_limited,
            "interrupted": self.interrupted,
            "judged": self.judged,
            "pass_rate": None if rate is None else round(rate, 4),
        }


def tally(outcomes: Iterable[str]) -> Tally:
    """Count a run's mission outcomes (``RequirementRecord.outcome``: pass, fail, blocked,
    skipped, error, budget_exhausted, rate_limited, interrupted)."""
    found = list(outcomes)
    return Tally(
        passed=found.count("pass"),
        failed=found.count("fail"),
        blocked=found.count("blocked"),
        skipped=found.count("skipped"),
        errors=found.count("error"),
        budget_exhausted=found.count("budget_exhausted"),
        rate_limited=found.count("rate_limited"),
        interrupted=found.count("interrupted"),
    )


def total(tallies: Iterable[Tally]) -> Tally:
    """Several runs' missions together (the rate over them is the same rule)."""
    out = Tally()
    for one in tallies:
        out = out + one
    return out


def percent(rate: float | None) -> str:
    """``33%``, or ``-`` for no rate."""
    return "-" if rate is None else f"{rate:.0%}"
