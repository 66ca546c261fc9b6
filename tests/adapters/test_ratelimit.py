"""Provider limits in what a CLI said (``uh_core.adapters.ratelimit``): each real CLI's wording
of an HTTP 429, as it printed it against the end-to-end suite's model server
(tests/e2e/test_limits.py), when the limit lifts, and what is not a limit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from tests.adapters.conftest import FakeFactory, Sandbox, adapter_for, drive
from uh_core.adapters.aider import split_stdout
from uh_core.adapters.ratelimit import MAX_WAIT_S, detect, retry_after

NOW = datetime(2026, 12, 6, 17, 16, 55, tzinfo=UTC)
RESETS = "2026-12-06T17:17:00Z"  # five seconds after NOW
OPENAI_RATE = (
    "Rate limit reached for mock-model in organization org-mock on requests per min (RPM): "
    "Limit 3, Used 3, Requested 1. Please try again in 3s. Visit "
    "https://platform.openai.com/account/rate-limits to learn more."
)
ANTHROPIC_RATE = (
    "This request would exceed the rate limit for your organization (org-mock) of 50 requests "
    "per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can "
    "see the response headers for current usage. Please reduce the prompt length or the "
    "maximum tokens requested, or try again later."
)
USAGE = f"Usage limit reached for this organization; it resets at {RESETS}."


@pytest.mark.parametrize(
    ("said", "after"),
    [
        # codex: neither the body nor Retry-After, then its own usage-limit message (local
        # time, to the minute: the end of 17:17 is 65 s after NOW)
        ("exceeded retry limit, last status: 429 Too Many Requests", None),
        ("You’ve hit your usage limit. Try again at 5:17 PM.", 65.0),
        # claude's result line
        (f"error (api_error): API Error: Request rejected (429) · {ANTHROPIC_RATE}", None),
        (f"error (api_error): API Error: Request rejected (429) · {USAGE}", 5.0),
        # pi and omp: the last message's errorMessage (omp appends the Retry-After header)
        (f"429 {OPENAI_RATE}", 3.0),
        (f"429 {OPENAI_RATE} retry-after-ms=3000", 3.0),
        (
            "Provider requested 1800000ms wait, exceeds retry.maxDelayMs (300000ms). Original "
            f"error: 429 {USAGE}\n{USAGE} (type=usage_limit_reached)",
            5.0,
        ),
        # hermes: its response, which the usage file's failure repeats
        (f"hermes failed: API call failed after 1 retries: HTTP 429: {OPENAI_RATE}", 3.0),
        # aider: its error paragraph, joined
        (
            f"litellm.RateLimitError: RateLimitError: OpenAIException - {USAGE} The API "
            "provider has rate limited you. Try again later or check your quotas.",
            5.0,
        ),
    ],
)
def test_each_clis_limit_is_recognised_with_when_it_lifts(said: str, after: float | None) -> None:
    limit = detect(said, now=NOW)
    assert limit is not None
    assert limit.message == said.splitlines()[0][:300]
    assert limit.retry_after_s == after


@pytest.mark.parametrize(
    ("said", "after"),
    [
        ("Retry-After: 3", 3.0),
        ("retry after 3 s", 3.0),
        ("Please try again in 20 seconds.", 20.0),
        ("try again in 2m", 120.0),
        ("Please try again in 1m12.5s.", 72.5),  # OpenAI's, on a tokens-per-minute limit
        ("Please try again in 20ms.", 0.02),
        ("try again in 1h 30m", 5400.0),
        ("retry-after-ms=1500", 1.5),
        (f"it resets at {RESETS}", 5.0),
        ("resets at 2026-12-06T18:16:55+01:00", 0.0),  # now, in another zone
        (f"resets at {int(NOW.timestamp()) + 30}", 30.0),  # a Unix time
        ("resets at 2099-01-01T00:00:00Z", MAX_WAIT_S),  # not believed past the bound
        ("Try again at 5:16 PM.", 5.0),  # this minute: its end
        ("Try again at 4:00 PM.", 0.0),  # passed
        ("Try again at 12:05 AM.", 0.0),  # 00:05 today: passed
        ("Try again at Dec 6th, 2026 5:17 PM.", 65.0),  # codex's form for another day
        ("Try again at Dec 7th, 2026 5:17 PM.", MAX_WAIT_S),
        ("Try again at Dec 32nd, 2026 5:17 PM.", None),
        ("Try again later.", None),
        ("rate limited", None),
    ],
)
def test_when_the_limit_lifts(said: str, after: float | None) -> None:
    found = retry_after(said, NOW)
    if after is None:
        assert found is None
    else:
        assert found == pytest.approx(after)


def test_a_clock_time_is_read_in_the_zone_it_was_printed_in() -> None:
    paris = NOW.astimezone(timezone(timedelta(hours=1)))  # 18:16:55 there
    assert retry_after("Try again at 6:17 PM.", paris) == 65.0
    assert retry_after("Try again at 5:17 PM.", paris) == 0.0
    before_midnight = datetime(2026, 12, 31, 23, 59, tzinfo=UTC)
    assert retry_after("Try again at Jan 1st, 2027 12:30 AM.", before_midnight) == 1920.0
    # the default: now, in the local zone (the CLI's, on the same machine)
    assert retry_after(f"Try again at {datetime.now().astimezone():%I:%M %p}") is not None


@pytest.mark.parametrize(
    "said",
    [
        "HTTP 429",
        "status: 429",
        "error code 429",
        "429 Too Many Requests",
        "rate_limit_error",
        "RateLimitError",
        "You've hit your usage limit.",
        "Quota exceeded for quota metric 'Generate Content API requests per minute'",
        "RESOURCE_EXHAUSTED",
    ],
)
def test_the_ways_a_limit_is_said(said: str) -> None:
    assert detect(said) is not None


@pytest.mark.parametrize(
    "said",
    [
        'File "/work/app/limiter.py", line 429, in acquire',  # a traceback: not a limit
        'Traceback (most recent call last):\n  File "x.py", line 429, in <module>\nValueError',
        "took 429 ms",
        "exit 429",
        "429",
        "error: 401 Unauthorized: invalid x-api-key",
        "Try again at 5:17 PM.",  # when, but not a limit
        "",
    ],
)
def test_what_is_not_a_limit(said: str) -> None:
    assert detect(said) is None


def test_the_first_text_that_says_a_limit_and_its_line() -> None:
    assert detect(None, "", "boom") is None
    limit = detect("crashed", "starting\nHTTP 429: slow down; Retry-After: 7\nexiting\n")
    assert limit is not None
    assert (limit.message, limit.retry_after_s) == ("HTTP 429: slow down; Retry-After: 7", 7.0)
    long = detect("rate limit " + "x" * 1000)
    assert long is not None and len(long.message) == 300


# --- aider: the error that ended the run, not one it retried past ------------------------
AIDER_BANNER = ["Aider v0.86.2", "Model: openai/mock-model with diff edit format", "", "a.txt"]


def aider_limit(resets: str) -> list[str]:
    """One rate-limit error as aider printed it (rich wraps it at 80 columns)."""
    return [
        "litellm.RateLimitError: RateLimitError: OpenAIException - Usage limit reached ",
        f"for this organization; it resets at {resets}.",
        "The API provider has rate limited you. Try again later or check your quotas.",
    ]


def test_aider_reports_the_limit_it_gave_up_on_without_its_own_backoff() -> None:
    lines = [
        *AIDER_BANNER,
        *aider_limit("2026-12-06T17:15:03Z"),
        "Retrying in 0.2 seconds...",
        *aider_limit("2026-12-06T17:15:05Z"),
        "Retrying in 0.5 seconds...",
        *aider_limit(RESETS),
        "",
    ]
    reply, error = split_stdout(lines)
    assert reply == "a.txt"
    assert error == (
        f"litellm.RateLimitError: RateLimitError: OpenAIException - {USAGE} The API provider "
        "has rate limited you. Try again later or check your quotas."
    )
    limit = detect(error, now=NOW)
    assert limit is not None and limit.retry_after_s == 5.0  # not aider's 0.2 s


def test_aider_retrying_past_a_limit_is_no_error() -> None:
    lines = [*AIDER_BANNER, *aider_limit(RESETS), "Retrying in 0.2 seconds...", "Done.", ""]
    assert split_stdout(lines) == ("a.txt\nDone.", None)


def test_aider_ending_on_a_limit_is_rate_limited(
    sandbox: Sandbox, fake_cli: FakeFactory, tmp_path: Path
) -> None:
    resets = (datetime.now(UTC) + timedelta(seconds=600)).strftime("%Y-%m-%dT%H:%M:%SZ")
    stdout = tmp_path / "aider-limit.txt"
    lines = [
        *AIDER_BANNER,
        *aider_limit(RESETS),
        "Retrying in 0.2 seconds...",
        *aider_limit(resets),
    ]
    stdout.write_text("\n".join(["", *lines, ""]), encoding="utf-8")
    fake_cli("aider", stdout=stdout, version="aider 0.86.2")  # exits 0, as aider does
    adapter = adapter_for("aider")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.result.status == "rate_limited"
    assert run.result.blockers[0].startswith("rate limited: litellm.RateLimitError")
    assert run.result.retry_after_s is not None and 590 < run.result.retry_after_s <= 600
