"""Token usage as an agent CLI reports it, kept per model.

Every CLI counts differently; each parser turns its CLI's figures into one shape:

- ``input_tokens``: every input token the model read, cached ones included (claude, pi
  and hermes report the cached part apart; codex and aider include it already);
- ``cache_read_tokens`` / ``cache_write_tokens``: the part of ``input_tokens`` read from
  or written to the provider's prompt cache, where the CLI says (0 where it does not);
- ``output_tokens``;
- ``cost_usd``: what the CLI itself said the calls cost, if it said (never uh's price);
- ``model``: the model the CLI says it used; a CLI that does not say (codex's JSON) is
  credited with the model its manifest configures, and None when nothing names one.

A ``UsageMeter`` sums one run's reports per model: ``runtime.usage`` is one event per
model, so a price table can price each at its own rate.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from uh_core.models.events import RuntimeUsage
from uh_core.models.usage import TokenUsage


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    model: str | None = None

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cache_read_tokens += other.cache_read_tokens
        self.cache_write_tokens += other.cache_write_tokens
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd
        if self.model != other.model:
            self.model = None  # a sum over several models names none of them


@dataclass
class UsageMeter:
    """One run's usage, per model, in the order the models were first reported."""

    by_model: dict[str | None, Usage] = field(default_factory=dict)
    configured_model: str | None = None  # the manifest's model: credited when none is said

    def add(self, usage: Usage) -> None:
        model = usage.model or self.configured_model
        entry = self.by_model.get(model)
        if entry is None:
            self.by_model[model] = replace(usage, model=model)
        else:
            entry.add(replace(usage, model=model))

    def clear(self) -> None:
        self.by_model.clear()

    def per_model(self) -> list[Usage]:
        return [replace(usage) for usage in self.by_model.values()]

    def total(self) -> Usage | None:
        """The sum over every model (None when nothing was reported)."""
        if not self.by_model:
            return None
        models = list(self.by_model.values())
        total = replace(models[0])
        for usage in models[1:]:
            total.add(usage)
        return total


USAGE_PREFIX = "uh-usage: "


def usage_line(text: str) -> Usage | None:
    """A plain agent's (``command``, ``script``) report of its tokens: one stdout line
    ``uh-usage: {"model": "m", "input_tokens": 10, "output_tokens": 2, ...}`` (keys as in
    ``runtime.usage``; ``cost_usd`` for its own figure). Anything else, or a malformed
    report, is not a report (it stays what the agent said)."""
    if not text.startswith(USAGE_PREFIX):
        return None
    try:
        data = json.loads(text[len(USAGE_PREFIX) :])
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    counts = [data.get(key, 0) for key in _COUNTS]
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts):
        return None
    model, cost = data.get("model"), data.get("cost_usd")
    if model is not None and not isinstance(model, str):
        return None
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)):
        return None
    return Usage(counts[0], counts[1], cost, counts[2], counts[3], model or None)


_COUNTS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def token_usages(meter: UsageMeter) -> list[TokenUsage]:
    """The meter's models as the records keep them (the ledger, ``runtime-result.yaml``)."""
    return [
        TokenUsage(
            model=usage.model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reported_cost_usd=usage.cost_usd,
        )
        for usage in meter.per_model()
    ]


def usage_events(
    runtime: str, usages: list[TokenUsage], attempt: int | None = None
) -> list[RuntimeUsage]:
    """One ``runtime.usage`` per model."""
    return [
        RuntimeUsage(
            runtime=runtime,
            source="runtime",
            attempt=attempt,
            **usage.model_dump(include=set(_EVENT_FIELDS)),
        )
        for usage in usages
    ]


_EVENT_FIELDS = (
    "model",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reported_cost_usd",
)
