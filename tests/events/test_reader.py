"""Reading event logs: tolerant parsing and following a file by byte offset (contract §8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from uh_core.events.reader import LogTail, parse_event, read_events
from uh_core.events.writer import EventLog, append_event
from uh_core.follow import tail_start
from uh_core.models.events import (
    AcceptanceChecked,
    RuntimeProgress,
    UnknownEvent,
    VerificationStarted,
)


def _line(**data: object) -> bytes:
    return json.dumps(data).encode("utf-8") + b"\n"


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(data)


# --- parse_event: the TypeScript uh's spellings and foreign payloads -----------------------


def test_typescript_style_line_is_an_unknown_event_with_event_and_timestamp() -> None:
    event = parse_event(
        b'{"type": "mission.started", "ts": "2025-03-01T10:00:00.000Z", "missionId": "m1"}'
    )
    assert isinstance(event, UnknownEvent)
    assert event.event == "mission.started"
    assert event.timestamp == "2025-03-01T10:00:00.000Z"
    assert event.model_extra == {"missionId": "m1"}  # unknown keys kept, spelling keys consumed


@pytest.mark.parametrize(
    ("type_key", "time_key"),
    [("type", "ts"), ("kind", "time"), ("type", "at"), ("event", "timestamp"), ("kind", "at")],
)
def test_every_accepted_spelling(type_key: str, time_key: str) -> None:
    event = parse_event(_line(**{type_key: "x.y", time_key: "2025-01-01T00:00:00Z"}))
    assert event is not None
    assert (event.event, event.timestamp) == ("x.y", "2025-01-01T00:00:00Z")


def test_numeric_typescript_timestamp_is_kept_as_text() -> None:
    event = parse_event(_line(type="tick", ts=1735689600000))
    assert event is not None and event.timestamp == "1735689600000"


def test_event_key_wins_over_type_and_runtime_progress_keeps_its_kind() -> None:
    line = _line(event="runtime.progress", type="other", kind="tool_call", message="m")
    event = parse_event(line)
    assert isinstance(event, RuntimeProgress)
    assert (event.kind, event.message) == ("tool_call", "m")
    assert event.model_extra == {"type": "other"}


def test_known_type_in_typescript_spelling_is_typed() -> None:
    event = parse_event(_line(type="verification.started", ts="t", total_acceptance=3))
    assert isinstance(event, VerificationStarted)
    assert (event.total_acceptance, event.timestamp) == (3, "t")


def test_known_type_with_a_foreign_payload_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    path.write_bytes(
        _line(
            event="acceptance.checked",
            timestamp="2025-01-01T00:00:00.000Z",
            status={"nested": "object"},
            exit_code="zero",
            criterion="ac-1",
        )
    )
    (event,), malformed = read_events(path)
    assert malformed == 0
    assert isinstance(event, UnknownEvent)  # not dropped, kept untyped
    assert event.event == "acceptance.checked"
    assert event.model_extra == {
        "status": {"nested": "object"},
        "exit_code": "zero",
        "criterion": "ac-1",
    }


def test_unknown_keys_are_kept_on_known_events() -> None:
    event = parse_event(_line(event="acceptance.checked", ac_id="ac-1", status="passed", x=[1]))
    assert isinstance(event, AcceptanceChecked)
    assert event.model_extra == {"x": [1]}


BAD_LINES = [
    b"not json at all",
    b'{"event": "a", ',  # truncated object
    b"[1, 2, 3]",
    b'"a string"',
    b"42",
    b"null",
    b'{"no_type": true}',
    b'{"event": 7}',
    b'{"event": "a", "timestamp": 12}',  # timestamp must be text
    b'{"event": "a", "mission_id": ["x"]}',
    b'{"event": "caf\xe9"}',  # latin-1, not UTF-8
    b'{"event": "x\xed\xa0\x80"}',  # an encoded lone surrogate: not UTF-8 either
    b"\xff\xfe{\x00}\x00",  # UTF-16 with a BOM
    b"[" * 100_000 + b"]" * 100_000,  # nesting deep enough to exhaust recursion
]


@pytest.mark.parametrize("bad", BAD_LINES, ids=range(len(BAD_LINES)))
def test_malformed_line_is_not_an_event(bad: bytes) -> None:
    assert parse_event(bad) is None


def test_malformed_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    good = [_line(event="a", n=n) for n in range(3)]
    path.write_bytes(
        good[0]
        + b"".join(bad.replace(b"\n", b"") + b"\n" for bad in BAD_LINES)
        + b"\n   \n"  # blank lines are neither events nor malformed
        + good[1]
        + b"\r\n"
        + good[2]
    )
    events, malformed = read_events(path)
    assert [e.model_extra for e in events] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert malformed == len(BAD_LINES)


def test_missing_file_reads_as_empty(tmp_path: Path) -> None:
    assert read_events(tmp_path / "nope.ndjson") == ([], 0)
    tail = LogTail(tmp_path / "nope.ndjson")
    assert tail.poll() == [] and tail.offset == 0


# --- LogTail: following a file by byte offset ----------------------------------------------


def test_partial_line_waits_for_its_newline(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    line = _line(event="acceptance.checked", ac_id="ac-1", status="passed")
    path.write_bytes(b"")
    tail = LogTail(path)
    _append(path, line[:20])
    assert tail.poll() == [] and tail.offset == 0 and tail.malformed == 0
    _append(path, line[20:-1])  # everything but the newline
    assert tail.poll() == [] and tail.offset == 0 and tail.malformed == 0
    _append(path, b"\n")
    (event,) = tail.poll()
    assert isinstance(event, AcceptanceChecked) and event.ac_id == "ac-1"
    assert tail.offset == len(line) and tail.malformed == 0
    assert tail.poll() == []


# A real writer process writing each line in two pieces, pausing in the middle.
SPLIT_WRITER = textwrap.dedent(
    """
    import json, os, sys, time
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    for n in range(int(sys.argv[2])):
        line = json.dumps({"event": "runtime.progress", "runtime": "w", "message": "m" * n,
                           "seq": n}).encode() + b"\\n"
        cut = len(line) // 2
        os.write(fd, line[:cut])
        time.sleep(0.002)
        os.write(fd, line[cut:])
    """
)


def test_reader_polling_while_a_process_writes_lines_in_two_pieces(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    count = 200
    proc = subprocess.Popen([sys.executable, "-c", SPLIT_WRITER, str(path), str(count)])
    tail = LogTail(path)
    seen: list[int] = []
    polls = 0
    while proc.poll() is None:
        seen.extend(e.model_extra["seq"] for e in tail.poll())  # type: ignore[index]
        polls += 1
    seen.extend(e.model_extra["seq"] for e in tail.poll())  # type: ignore[index]
    assert proc.returncode == 0
    assert seen == list(range(count))
    assert tail.malformed == 0
    assert polls > count  # the reader really did look at half-written lines


def test_line_larger_than_the_read_chunk(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    big = "é" * (3 << 20)  # 6 MB of UTF-8, several read chunks
    append_event(path, RuntimeProgress(runtime="r", message="small"))
    append_event(path, RuntimeProgress(runtime="r", message=big))
    append_event(path, RuntimeProgress(runtime="r", message="after"))
    events, malformed = read_events(path)
    assert [len(e.message) for e in events] == [5, len(big), 5]  # type: ignore[attr-defined]
    assert malformed == 0


def test_max_bytes_reads_in_steps_without_splitting_lines(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    lines = [_line(event="a", n=n) for n in range(50)]
    path.write_bytes(b"".join(lines))
    tail = LogTail(path)
    got: list[int] = []
    for _ in range(1000):
        batch = tail.poll(max_bytes=len(lines[0]) * 3 + 5)
        if not batch and tail.offset == path.stat().st_size:
            break
        got.extend(e.model_extra["n"] for e in batch)  # type: ignore[index]
    assert got == list(range(50))
    assert tail.malformed == 0


def test_file_replaced_by_rename_is_read_again_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    log = EventLog(path, mission_id="m1", run_id="old")
    for n in range(3):
        log.emit(AcceptanceChecked(ac_id=f"old-{n}", status="passed"))
    tail = LogTail(path)
    assert len(tail.poll()) == 3

    replacement = tmp_path / "events.ndjson.new"
    EventLog(replacement, mission_id="m1", run_id="new").emit(
        AcceptanceChecked(ac_id="new-0", status="failed")
    )
    os.replace(replacement, path)
    (event,) = tail.poll()
    assert event.ac_id == "new-0"  # type: ignore[attr-defined]
    assert tail.resets == 1
    # Following the new file goes on normally: nothing is read twice.
    assert tail.poll() == [] and tail.poll() == []
    EventLog(path, run_id="new").emit(AcceptanceChecked(ac_id="new-1", status="passed"))
    assert [e.ac_id for e in tail.poll()] == ["new-1"]  # type: ignore[attr-defined]
    assert tail.resets == 1


def test_replacement_longer_than_the_old_file_is_noticed(tmp_path: Path) -> None:
    """Same size checks alone would miss it: the inode tells."""
    path = tmp_path / "events.ndjson"
    path.write_bytes(_line(event="a"))
    tail = LogTail(path)
    assert [e.event for e in tail.poll()] == ["a"]
    replacement = tmp_path / "tmp"
    replacement.write_bytes(b"".join(_line(event="b", n=n) for n in range(10)))
    os.replace(replacement, path)
    assert [e.event for e in tail.poll()] == ["b"] * 10
    assert tail.resets == 1
    assert tail.poll() == [] and tail.poll() == [] and tail.resets == 1  # never read twice


def test_truncated_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    path.write_bytes(b"".join(_line(event="first", n=n) for n in range(5)))
    tail = LogTail(path)
    assert len(tail.poll()) == 5
    inode = path.stat().st_ino
    with open(path, "r+b") as handle:
        handle.truncate(0)
    assert tail.poll() == []
    assert tail.resets == 1 and tail.offset == 0
    _append(path, _line(event="second"))
    assert [e.event for e in tail.poll()] == ["second"]
    assert path.stat().st_ino == inode
    assert tail.poll() == [] and tail.resets == 1  # and nothing is read twice


def test_truncated_and_rewritten_past_the_old_offset_is_read_again(tmp_path: Path) -> None:
    """Same inode, larger than before: the first bytes changed, so start again."""
    path = tmp_path / "events.ndjson"
    path.write_bytes(_line(event="old", timestamp="2025-01-01T00:00:00.000Z"))
    tail = LogTail(path)
    assert [e.event for e in tail.poll()] == ["old"]
    with open(path, "wb") as handle:  # truncate and rewrite in place, between two polls
        handle.write(b"".join(_line(event="new", n=n) for n in range(5)))
    assert [e.event for e in tail.poll()] == ["new"] * 5
    assert tail.resets == 1
    assert tail.poll() == [] and tail.resets == 1


def test_appended_lines_after_a_torn_line_are_followed(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    tail = LogTail(path)
    append_event(path, RuntimeProgress(runtime="r", message="one"))
    assert len(tail.poll()) == 1
    _append(path, b'{"event":"runtime.progress","runtime":"r","mess')  # a crash mid-write
    assert tail.poll() == [] and tail.malformed == 0
    append_event(path, RuntimeProgress(runtime="r", message="two"))
    assert [e.message for e in tail.poll()] == ["two"]  # type: ignore[attr-defined]
    assert tail.malformed == 1


def test_rewritten_in_place_by_another_run_in_the_same_second(tmp_path: Path) -> None:
    """The first bytes differ only in the run id: the fingerprint must reach that far."""
    path = tmp_path / "events.ndjson"
    stamp = "2025-01-01T00:00:00.000Z"
    first = VerificationStarted(timestamp=stamp, mission_id="m1", run_id="verify-aaaaaa")
    append_event(path, first)
    tail = LogTail(path)
    assert len(tail.poll()) == 1
    os.truncate(path, 0)
    second = VerificationStarted(timestamp=stamp, mission_id="m1", run_id="verify-bbbbbb")
    append_event(path, second)
    append_event(path, AcceptanceChecked(timestamp=stamp, run_id="verify-bbbbbb", ac_id="ac-1"))
    events = tail.poll()
    assert [e.run_id for e in events] == ["verify-bbbbbb", "verify-bbbbbb"]
    assert tail.resets == 1 and tail.malformed == 0


def test_tail_start_finds_the_last_lines(tmp_path: Path) -> None:
    path = tmp_path / "log"
    path.write_bytes(b"".join(b"line %d\n" % n for n in range(10_000)) + b"torn")
    start = tail_start(path, 3)
    assert path.read_bytes()[start:] == b"line 9997\nline 9998\nline 9999\ntorn"
    assert tail_start(path, 50_000) == 0
    assert tail_start(tmp_path / "missing", 3) == 0
    tail = LogTail(path, start)
    assert tail.poll() == [] and tail.malformed == 3  # plain text is not an event


def test_a_tail_started_at_tail_start_reads_only_the_newest_events(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    log = EventLog(path, mission_id="m", run_id="r")
    for n in range(200):
        log.emit(RuntimeProgress(runtime="x", message=f"n{n}"))
    tail = LogTail(path, tail_start(path, 5))
    assert [e.message for e in tail.poll()] == [f"n{n}" for n in range(195, 200)]  # type: ignore[attr-defined]
    log.emit(RuntimeProgress(runtime="x", message="new"))
    assert [e.message for e in tail.poll()] == ["new"]  # type: ignore[attr-defined]
