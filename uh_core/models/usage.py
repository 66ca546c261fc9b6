"""Tokens and money: what an agent's CLI reported, and what it cost at the operator's prices.

- ``TokenUsage``: one model's tokens in one run, as its CLI reported them
  (``uh_core/adapters/usage.py`` says how each CLI counts). ``input_tokens`` counts every
  input token; ``cache_read_tokens`` and ``cache_write_tokens`` are the parts of it read
  from and written to the provider's prompt cache.
- ``ModelPrice``: ``pricing:`` in ``harness.config.yaml``, USD per million tokens. A cache
  price not given is the input price (what a provider without a cache discount charges).
- ``price``: tokens → ``Cost``. A model without a price, or tokens no model was named for,
  make the cost unknown, and say so ("cost unknown: no price for model X"); an unknown
  price is never counted as 0.
- ``merge``: usages summed per model (an attempt's, a mission's, a runtime's, a run's).

The figures are the CLI's own: an agent's process writes them, so they steer budgets and
reports, never the gate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pydantic import Field

from uh_core.models.base import Open, Strict

PER = 1_000_000  # prices are per million tokens


class TokenUsage(Open):
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reported_cost_usd: float | None = None  # the CLI's own figure, when it gave one

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class ModelPrice(Strict):
    """USD per million tokens of one model."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_read: float | None = Field(default=None, ge=0)
    cache_write: float | None = Field(default=None, ge=0)


@dataclass
class Cost:
    """A cost in USD, or unknown (``usd`` None) with every reason (``unknown``)."""

    usd: float | None = 0.0
    unknown: list[str] = field(default_factory=list)

    def add(self, other: Cost) -> None:
        self.unknown += [why for why in other.unknown if why not in self.unknown]
        self.usd = None if self.unknown else (self.usd or 0.0) + (other.usd or 0.0)

    def shown(self) -> str:
        if self.usd is not None:
            return f"${self.usd:.4f}"
        return "cost unknown: " + "; ".join(self.unknown)


def price_of(model: str, table: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The model's price: by its name, else by the name after its provider prefix
    (aider says ``openai/gpt-5``, litellm's way)."""
    if model in table:
        return table[model]
    short = model.rsplit("/", 1)[-1]
    return table.get(short)


def price(usages: Iterable[TokenUsage], table: Mapping[str, ModelPrice]) -> Cost:
    cost = Cost()
    for usage in usages:
        if usage.tokens == 0:
            continue
        if usage.model is None:
            cost.add(Cost(None, ["the CLI named no model for its tokens"]))
            continue
        rate = price_of(usage.model, table)
        if rate is None:
            cost.add(Cost(None, [f"no price for model {usage.model}"]))
            continue
        cache_read = rate.cache_read if rate.cache_read is not None else rate.input
        cache_write = rate.cache_write if rate.cache_write is not None else rate.input
        plain = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
        usd = (
            plain * rate.input
            + usage.cache_read_tokens * cache_read
            + usage.cache_write_tokens * cache_write
            + usage.output_tokens * rate.output
        ) / PER
        cost.add(Cost(usd))
    return cost


def merge(usages: Iterable[TokenUsage]) -> list[TokenUsage]:
    """Summed per model, in the order each model first appears."""
    by_model: dict[str | None, TokenUsage] = {}
    for usage in usages:
        entry = by_model.get(usage.model)
        if entry is None:
            by_model[usage.model] = usage.model_copy()
            continue
        entry.input_tokens += usage.input_tokens
        entry.output_tokens += usage.output_tokens
        entry.cache_read_tokens += usage.cache_read_tokens
        entry.cache_write_tokens += usage.cache_write_tokens
        if usage.reported_cost_usd is not None:
            entry.reported_cost_usd = (entry.reported_cost_usd or 0.0) + usage.reported_cost_usd
    return list(by_model.values())


def token_totals(usages: Iterable[TokenUsage]) -> dict[str, int]:
    """Every model's tokens together, for a one-line summary."""
    total = {"input_tokens": 0, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}
    for usage in usages:
        for key in total:
            total[key] += getattr(usage, key)
    return total
