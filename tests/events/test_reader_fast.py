"""``parse_event``'s fast path (a line of a known type, as uh writes it, validated from its
bytes by pydantic-core) reads every line exactly as the general path (json.loads, the
TypeScript spellings, the model) does: the same event, or the same None. Every line a real
demo and harness run wrote is compared too, in tests/workspace/test_scale.py (its workspace)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uh_core.compat import ts
from uh_core.events import reader
from uh_core.events.reader import _parse_general, parse_event
from uh_core.models.events import EVENT_TYPES


def same(line: bytes) -> None:
    fast, general = parse_event(line), _parse_general(line)
    assert repr(fast) == repr(general), line  # repr: a NaN is equal to itself there


def test_a_line_uh_writes_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    line = (
        b'{"event":"check.checked","timestamp":"2026-12-07T10:00:00.000Z","mission_id":"m",'
        b'"run_id":"r","name":"compile","status":"passed","exit_code":0,"duration_ms":5}'
    )
    expected = _parse_general(line)

    def refused(line: bytes | str) -> None:
        raise AssertionError("took the general path")

    monkeypatch.setattr(reader, "_parse_general", refused)
    assert parse_event(line) == expected


@pytest.mark.parametrize(
    "tail",
    [
        b',"x":"\\ud800"',  # a lone surrogate: json.loads keeps it, pydantic-core refuses it
        b',"x":"\xff"',  # not UTF-8
        b',"x":"\xed\xa0\x80"',  # a surrogate encoded in UTF-8
        b"} trailing",
        b',"ts":"2026-01-01"',  # no timestamp, a TypeScript spelling of it
        b',"timestamp":""',
        b',"event":"acceptance.checked"',  # a second type: the last one counts
        b',"event":5',
        b',"x":NaN,"y":1e999',
        b',"exit_code":"0"',
        b',"owner":{"pid":"x"}',
    ],
)
def test_lines_at_the_edges_read_as_the_general_path_reads_them(tail: bytes) -> None:
    same(b'{"event":"check.checked","timestamp":"t","name":"n","status":"passed"' + tail + b"}")


def test_the_rewritten_typescript_names_take_the_general_path() -> None:
    line = (
        b'{"event":"verification.finished","timestamp":"t","checks_total":2,"acceptance_total":1}'
    )
    event = parse_event(line)
    assert event is not None and event.model_dump()["summary"]["checks"]["total"] == 2


_NAMES = sorted(EVENT_TYPES)
_FIELDS = sorted({name for model in EVENT_TYPES.values() for name in model.model_fields})
_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63)
    | st.floats()
    | st.text()
    | st.sampled_from(["", "passed", "failed", "0", "1.5", "\ud800", "2026-01-01T00:00:00Z"]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=120, deadline=None)
@given(
    name=st.sampled_from(_NAMES) | st.text(max_size=12),
    timestamp=st.none() | st.sampled_from(["", "2026-12-07T10:00:00.000Z"]) | st.text(max_size=5),
    fields=st.dictionaries(st.sampled_from(_FIELDS) | st.text(max_size=6), _values, max_size=6),
    ascii_only=st.booleans(),
)
def test_any_line_reads_as_the_general_path_reads_it(
    name: str, timestamp: str | None, fields: dict[str, Any], ascii_only: bool
) -> None:
    data: dict[str, Any] = {"event": name}
    if timestamp is not None:
        data["timestamp"] = timestamp
    data.update(fields)  # may replace either, or add a second spelling
    text = json.dumps(data, ensure_ascii=ascii_only, allow_nan=True, separators=(",", ":"))
    try:
        line = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate written raw: not UTF-8
        line = text.encode("utf-8", "surrogatepass")
    same(line)


def test_only_the_rewritten_names_are_rewritten() -> None:
    """The fast path skips ``compat.ts.event`` for every other name: it must pass them through
    as they are, whatever TypeScript keys they carry."""
    keys = {"checks_total": 1, "acceptance_total": 1, "id": "x", "timestamp": "t"}
    for name in [*sorted(EVENT_TYPES), "some.other"]:
        data = {"event": name, **keys}
        if name not in ts.REWRITTEN_EVENTS:
            assert ts.event(data) is data, name
    for name in ts.REWRITTEN_EVENTS:
        assert ts.event({"event": name, **keys}) != {"event": name, **keys}, name
