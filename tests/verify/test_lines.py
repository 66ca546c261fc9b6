"""verify's per-step event lines are byte for byte what the event models encode to."""

from __future__ import annotations

import itertools
import json

import pytest

from uh_core.events.writer import encode_event
from uh_core.models.events import AcceptanceChecked, AcceptanceStarted, CheckChecked
from uh_core.verify.lines import Lines, Stamp, plain

STAMP = "2026-11-29T20:06:45.014Z"
TEXTS = [
    "ac-1",
    "prints hello",
    "",
    "naïve",
    'say "hi"',
    "back\\slash",
    "tab\there",
    "\x7f",
    "é\u2028",
]


def _lines(mission_id: str = "greeting", run_id: str = "verify-20261129T200645Z-ade2e6") -> Lines:
    return Lines(mission_id, run_id, stamp=lambda: STAMP)


def _model_line(event: AcceptanceStarted | AcceptanceChecked | CheckChecked, lines: Lines) -> bytes:
    event.timestamp = STAMP
    event.mission_id = lines.mission_id
    event.run_id = lines.run_id
    return encode_event(event)


@pytest.mark.parametrize("ids", [("greeting", "verify-x"), ('m"1', "r"), ("m", "rün")])
@pytest.mark.parametrize("text", TEXTS)
def test_acceptance_started(ids: tuple[str, str], text: str) -> None:
    lines = _lines(*ids)
    for index, total in ((0, 1), (41, 200)):
        expected = _model_line(AcceptanceStarted(ac_id=text, index=index, total=total), lines)
        assert lines.acceptance_started(text, index, total) == expected


@pytest.mark.parametrize("text", TEXTS)
def test_acceptance_checked(text: str) -> None:
    lines = _lines()
    statuses = ["passed", "failed", "blocked", "unobserved", text]
    for status, severity, exit_code, flags in itertools.product(
        statuses,
        ["block", "warn"],
        [0, 1, 127, -1, None],
        itertools.product([False, True], repeat=3),
    ):
        timed_out, synthetic, flaky = flags
        model = AcceptanceChecked(
            ac_id=text, status=status, severity=severity, exit_code=exit_code, duration_ms=12,
            timed_out=timed_out, synthetic=synthetic, flaky=flaky,
        )  # fmt: skip
        line = lines.acceptance_checked(
            text, status, severity, exit_code, 12, timed_out, synthetic, flaky
        )
        assert line == _model_line(model, lines)
        assert json.loads(line)["ac_id"] == text


@pytest.mark.parametrize("text", TEXTS)
def test_check_checked(text: str) -> None:
    lines = _lines()
    for status, exit_code, timed_out in itertools.product(
        ["passed", "failed", text], [0, 2, None], [False, True]
    ):
        model = CheckChecked(
            name=text, status=status, exit_code=exit_code, duration_ms=0, timed_out=timed_out
        )
        line = lines.check_checked(text, status, exit_code, 0, timed_out)
        assert line == _model_line(model, lines)


def test_plain_is_what_json_writes_as_it_is() -> None:
    for text in [*TEXTS, "a b", "x/y:z", "{}", "'"]:
        if plain(text):
            assert json.dumps(text) == f'"{text}"'
    assert not plain('"') and not plain("\\") and not plain("\n") and not plain("é")


def test_stamp_has_the_clock_format_and_honours_a_frozen_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stamp = Stamp()
    first, second = stamp(), stamp()
    assert len(first) == len(STAMP) and first.endswith("Z") and first[10] == "T"
    assert first <= second
    monkeypatch.setenv("UH_FROZEN_TIME", "2030-01-02T03:04:05.678Z")
    assert Stamp()() == "2030-01-02T03:04:05.678Z"
