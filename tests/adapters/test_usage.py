"""What each CLI reported, per model (``uh_core.adapters.usage``), and a plain agent's own
report: a ``uh-usage:`` line on its stdout."""

from __future__ import annotations

import pytest

from uh_core.adapters.base import OutputParser
from uh_core.adapters.usage import Usage, UsageMeter, token_usages, usage_events, usage_line


def test_the_meter_keeps_each_model_and_credits_the_configured_one() -> None:
    meter = UsageMeter(configured_model="gpt-5")
    meter.add(Usage(10, 1))  # the CLI named no model: the manifest's
    meter.add(Usage(5, 2, 0.1, cache_read_tokens=3, model="haiku"))
    meter.add(Usage(1, 1, model="gpt-5"))
    assert [(u.model, u.input_tokens, u.output_tokens) for u in meter.per_model()] == [
        ("gpt-5", 11, 2),
        ("haiku", 5, 2),
    ]
    total = meter.total()
    assert total == Usage(16, 4, 0.1, 3, 0, None)  # several models: the sum names none
    usages = token_usages(meter)
    events = usage_events("claude", usages, attempt=2)
    assert [(e.model, e.input_tokens, e.attempt, e.runtime) for e in events] == [
        ("gpt-5", 11, 2, "claude"),
        ("haiku", 5, 2, "claude"),
    ]
    assert events[1].cache_read_tokens == 3 and events[1].reported_cost_usd == 0.1


def test_nothing_reported_is_no_usage() -> None:
    assert UsageMeter().total() is None


def test_a_plain_agents_usage_line_is_counted_not_said() -> None:
    parser = OutputParser()
    line = b'uh-usage: {"model": "m", "input_tokens": 7, "output_tokens": 2, "cost_usd": 0.5}\n'
    events = parser.feed(line)
    assert [e.kind for e in events] == ["status"]
    assert parser.usage == Usage(7, 2, 0.5, model="m")
    assert parser.transcript() == ""  # not the agent's words: no sentinel can hide there
    parser.feed(b"done\n")
    assert parser.transcript() == "done\n"


@pytest.mark.parametrize(
    "text",
    [
        "uh-usage: not json",
        "uh-usage: [1, 2]",
        'uh-usage: {"input_tokens": -1}',
        'uh-usage: {"input_tokens": 1.5}',
        'uh-usage: {"input_tokens": true}',
        'uh-usage: {"model": 3}',
        'uh-usage: {"cost_usd": "free"}',
        'said: uh-usage: {"input_tokens": 1}',
    ],
)
def test_a_malformed_report_is_not_a_report(text: str) -> None:
    assert usage_line(text) is None
    parser = OutputParser()
    parser.feed(text.encode() + b"\n")
    assert parser.usage is None
