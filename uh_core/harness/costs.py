"""What a harness run spends: each attempt's tokens priced, and the money budgets.

- An attempt's cost: its agent's tokens (per model, as the CLI reported them) at the run's
  ``pricing:`` (``uh_core.models.usage.price``). An agent that reported no tokens, a model
  without a price: the cost is unknown and says why, never 0.
- Sums per mission, runtime and run: ``summarize`` (the ledger's ``usage`` blocks,
  ``harness report``, ``status --json``, MCP and the dashboard read the same figures).
- Budgets (``--budget-usd`` / ``budget_usd:`` for the run, a mission's ``budget_usd``):
  before each attempt, what was spent plus the mean cost of the mission's earlier attempts
  (its first attempt: the mean of the run's attempts so far) must stay within each budget;
  otherwise the attempt does not start and the mission ends ``budget_exhausted`` with the
  figures in its reason. Under a budget, a spend that is not known (an unpriced model, an
  agent that reports no tokens) stops the attempts too: money that cannot be counted
  cannot be kept within a limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from uh_core.models.ledger import AttemptRecord, RequirementRecord
from uh_core.models.usage import Cost, ModelPrice, TokenUsage, merge, price, token_totals

NO_USAGE = "the agent reported no token usage"
UNKNOWN = "cost unknown: "


def attempt_cost(
    usage: list[TokenUsage], pricing: Mapping[str, ModelPrice]
) -> tuple[float | None, str | None]:
    """(USD, None), or (None, why it is unknown)."""
    if not usage:
        return None, NO_USAGE
    cost = price(usage, pricing)
    if cost.usd is None:
        return None, "; ".join(cost.unknown)  # the why alone: readers say "cost unknown: "
    return round(cost.usd, 6), None


def _why(attempt: AttemptRecord) -> str:
    """Why an attempt's cost is unknown, as the readers add it after "cost unknown: " (a ledger
    written before 2026-12-07 has that prefix in the note itself)."""
    return (attempt.cost_note or NO_USAGE).removeprefix(UNKNOWN)


def cost_of(attempts: Iterable[AttemptRecord]) -> Cost:
    total = Cost()
    for attempt in attempts:
        if attempt.cost_usd is not None:
            total.add(Cost(attempt.cost_usd))
        else:
            total.add(Cost(None, [_why(attempt)]))
    return total


@dataclass
class Spend:
    """Known USD spent, the attempts it covers, and why some of it is not known."""

    usd: float = 0.0
    attempts: int = 0
    unknown: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, attempts: Iterable[AttemptRecord]) -> Spend:
        spend = cls()
        for attempt in attempts:
            if attempt.outcome == "interrupted" and attempt.agent is None:
                continue  # never reached its agent: nothing was spent
            if attempt.outcome == "rate_limited" and attempt.cost_usd == 0:
                continue  # refused before any usage: says nothing of the next one's cost
            spend.attempts += 1
            if attempt.cost_usd is not None:
                spend.usd += attempt.cost_usd
            elif (why := _why(attempt)) not in spend.unknown:
                spend.unknown.append(why)
        return spend

    @property
    def mean(self) -> float:
        return self.usd / self.attempts if self.attempts else 0.0


def budget_stop(
    mission_spend: Spend,
    run_spend: Spend,
    mission_budget: float | None,
    run_budget: float | None,
) -> str | None:
    """Why the next attempt may not start, with the figures; None: it may."""
    expected = mission_spend.mean if mission_spend.attempts else run_spend.mean
    for name, budget, spent in (
        ("the mission's budget_usd", mission_budget, mission_spend),
        ("the run's budget_usd", run_budget, run_spend),
    ):
        if budget is None:
            continue
        if spent.unknown:
            return (
                f"budget_usd {budget:g} cannot be kept: {UNKNOWN}{'; '.join(spent.unknown)} "
                f"(fix: add the model to pricing: in harness.config.yaml)"
            )
        if spent.usd + expected > budget:
            return (
                f"{name} ${budget:g}: ${spent.usd:.4f} spent in {spent.attempts} attempt(s), "
                f"the next expected to cost ${expected:.4f} "
                f"(the mean of {'this mission' if mission_spend.attempts else 'the run'}'s "
                f"attempts) would pass it"
            )
    return None


def summarize(requirements: Iterable[RequirementRecord]) -> dict[str, Any]:
    """Tokens and cost per mission, per runtime and for the run (JSON-ready)."""
    records = list(requirements)
    per_runtime: dict[str, list[AttemptRecord]] = {}
    missions: dict[str, Any] = {}
    for record in records:
        for attempt in record.attempts:
            runtime = attempt.agent.runtime if attempt.agent is not None else "?"
            per_runtime.setdefault(runtime, []).append(attempt)
        if record.attempts:
            missions[record.mission_id] = _block(record.attempts)
    every = [a for r in records for a in r.attempts]
    return {
        "run": _block(every),
        "runtimes": {name: _block(attempts) for name, attempts in per_runtime.items()},
        "missions": missions,
    }


def _block(attempts: list[AttemptRecord]) -> dict[str, Any]:
    usage = merge(u for a in attempts for u in a.usage)
    cost = cost_of(attempts)
    return {
        **token_totals(usage),
        "models": [u.model_dump(mode="json") for u in usage],
        "cost_usd": None if cost.usd is None else round(cost.usd, 6),
        "cost_unknown": cost.unknown,
        "attempts": len(attempts),
    }
