"""Tokens into money (``uh_core.models.usage``): each model at its own price, cache tokens
at theirs (else the input price), and an unknown price said, never counted as 0."""

from __future__ import annotations

import pytest

from uh_core.models.usage import ModelPrice, TokenUsage, merge, price, price_of

TABLE = {
    "claude-sonnet-4-6": ModelPrice(input=3, output=15, cache_read=0.3, cache_write=3.75),
    "gpt-5": ModelPrice(input=1.25, output=10),
}


def test_each_token_kind_at_its_price() -> None:
    usage = TokenUsage(
        model="claude-sonnet-4-6",
        input_tokens=1_000_000 + 200_000 + 100_000,  # plain + cache reads + cache writes
        cache_read_tokens=200_000,
        cache_write_tokens=100_000,
        output_tokens=10_000,
    )
    cost = price([usage], TABLE)
    assert cost.usd == pytest.approx(3 + 0.2 * 0.3 + 0.1 * 3.75 + 0.01 * 15)
    assert cost.unknown == []


def test_cache_tokens_without_a_cache_price_cost_what_input_costs() -> None:
    usage = TokenUsage(model="gpt-5", input_tokens=2_000_000, cache_read_tokens=1_000_000)
    assert price([usage], TABLE).usd == pytest.approx(2 * 1.25)


def test_a_provider_prefix_finds_the_models_price() -> None:
    assert price_of("openai/gpt-5", TABLE) is TABLE["gpt-5"]  # aider (litellm) names it so
    assert price_of("gpt-5-mini", TABLE) is None


def test_an_unknown_price_makes_the_whole_cost_unknown_and_says_why() -> None:
    usages = [
        TokenUsage(model="gpt-5", input_tokens=1_000_000),
        TokenUsage(model="mystery", input_tokens=10, output_tokens=1),
        TokenUsage(model=None, input_tokens=5),
    ]
    cost = price(usages, TABLE)
    assert cost.usd is None
    assert cost.unknown == [
        "no price for model mystery",
        "the CLI named no model for its tokens",
    ]
    assert cost.shown().startswith("cost unknown: no price for model mystery")


def test_no_tokens_cost_nothing_whatever_the_model() -> None:
    assert price([TokenUsage(model="mystery")], TABLE).usd == 0.0


def test_merge_sums_per_model_in_order_of_appearance() -> None:
    merged = merge(
        [
            TokenUsage(model="b", input_tokens=1, reported_cost_usd=0.5),
            TokenUsage(model="a", output_tokens=2),
            TokenUsage(model="b", input_tokens=3, cache_read_tokens=1, reported_cost_usd=0.25),
        ]
    )
    assert [(u.model, u.input_tokens, u.cache_read_tokens) for u in merged] == [
        ("b", 4, 1),
        ("a", 0, 0),
    ]
    assert merged[0].reported_cost_usd == 0.75


def test_a_price_is_never_negative() -> None:
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        ModelPrice(input=-1, output=1)
