"""Timestamps: the fast path on every event agrees with the datetime path to the millisecond."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from uh_core import clock

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.mark.parametrize(
    "nanos",
    [
        0,
        1_700_000_000_000_000_000,
        1_700_000_000_001_000_000,  # .001 s: a float would make it .000999…
        1_700_000_000_000_999_999,
        1_700_000_000_999_999_999,
        4_102_444_800_500_000_000,
    ],
)
def test_fast_path_matches_datetime(nanos: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UH_FROZEN_TIME", raising=False)
    monkeypatch.setattr(clock.time, "time_ns", lambda: nanos)
    moment = datetime.fromtimestamp(nanos // 1000 / 1_000_000, UTC)
    moment = moment.replace(microsecond=(nanos // 1000) % 1_000_000)  # exact, no float rounding
    expected = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    assert clock.timestamp() == expected
    assert STAMP.match(expected)


def test_frozen_time_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UH_FROZEN_TIME", "2026-01-02T03:04:05.678Z")
    assert clock.timestamp() == "2026-01-02T03:04:05.678Z"


def test_now_is_utc_with_millis(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UH_FROZEN_TIME", raising=False)
    stamp = clock.timestamp()
    assert STAMP.match(stamp)
    assert abs(clock.parse_timestamp(stamp) - datetime.now(UTC)).total_seconds() < 5
