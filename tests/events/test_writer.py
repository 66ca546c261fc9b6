"""The append-only writer (contract §8), exercised with real processes and real files."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from uh_core.errors import EventLogError
from uh_core.events.reader import LogTail, read_events
from uh_core.events.writer import EventLog, append_event, append_line, encode_event
from uh_core.models.events import AcceptanceChecked, RuntimeProgress, UnknownEvent

WRITERS = 4
EVENTS_PER_WRITER = 2000
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

# One writer process: waits for the start signal so all writers overlap, then appends
# events of varying size (some larger than PIPE_BUF) through the real EventLog.
WRITER_SCRIPT = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from uh_core.events.writer import EventLog
    from uh_core.models.events import RuntimeProgress

    path, go, writer, count = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    log = EventLog(path, mission_id="m-concurrent", run_id=writer)
    go.with_name(f"ready-{writer}").touch()
    deadline = time.monotonic() + 30
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.001)
    for seq in range(count):
        pad = "x" * ((seq * 37) % 6000)  # 0 .. ~6 KB: many lines exceed PIPE_BUF
        log.emit(RuntimeProgress(runtime=writer, message=f"{writer}:{seq}:{pad}", seq=seq))
    """
)


def test_concurrent_processes_never_interleave_or_lose_a_line(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "events.ndjson"
    go = tmp_path / "go"
    count = str(EVENTS_PER_WRITER)
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(path), str(go), f"w{n}", count])
        for n in range(WRITERS)
    ]
    ready = [tmp_path / f"ready-w{n}" for n in range(WRITERS)]
    deadline = time.monotonic() + 60
    while not all(r.exists() for r in ready):  # every writer started, waiting on the signal
        assert time.monotonic() < deadline, "a writer did not start"
        time.sleep(0.01)
    go.touch()
    # A reader follows the file while the writers append: it must never see half a line.
    tail = LogTail(path)
    live: list[str] = []
    while any(p.poll() is None for p in procs):
        live.extend(e.event for e in tail.poll())
        time.sleep(0.005)
    live.extend(e.event for e in tail.poll())
    assert [p.returncode for p in procs] == [0] * WRITERS

    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    lines = raw.split(b"\n")[:-1]
    assert len(lines) == WRITERS * EVENTS_PER_WRITER
    seqs: dict[str, list[int]] = {f"w{n}": [] for n in range(WRITERS)}
    for line in lines:
        data = json.loads(line)  # every line is valid JSON on its own
        assert data["event"] == "runtime.progress"
        assert TIMESTAMP.match(data["timestamp"])
        writer, seq, pad = data["message"].split(":")
        assert writer == data["run_id"] == data["runtime"]
        assert int(seq) == data["seq"]
        assert pad == "x" * ((data["seq"] * 37) % 6000)
        seqs[writer].append(data["seq"])
    for writer, got in seqs.items():
        assert got == list(range(EVENTS_PER_WRITER)), f"{writer} lost or reordered events"
    # The writers really overlapped (otherwise this test would prove nothing). How often they
    # take turns depends on the machine's load (19 switches with the suite on two busy cores,
    # hundreds when quiet); every writer handing over at least once is the proof needed.
    order = [json.loads(line)["run_id"] for line in lines]
    switches = sum(1 for a, b in itertools.pairwise(order) if a != b)
    assert switches >= WRITERS, f"writers never overlapped ({switches} switches)"

    # The tail saw exactly the same events, none malformed.
    assert len(live) == WRITERS * EVENTS_PER_WRITER
    assert tail.malformed == 0
    events, malformed = read_events(path)
    assert len(events) == WRITERS * EVENTS_PER_WRITER and malformed == 0


def _crash_mid_write(path: Path, fragment: bytes) -> None:
    """A real process writes part of a line, then dies by SIGKILL before the rest."""
    script = textwrap.dedent(
        f"""
        import os, signal
        fd = os.open({str(path)!r}, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, {fragment!r})
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], check=False)
    assert proc.returncode == -signal.SIGKILL


def test_torn_last_line_never_read_and_never_swallows_the_next_writer(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    log = EventLog(path, mission_id="m1", run_id="r1")
    log.emit(AcceptanceChecked(ac_id="ac-1", status="passed"))
    torn = b'{"event":"acceptance.checked","ac_id":"ac-2","status":"pass'
    _crash_mid_write(path, torn)
    assert path.read_bytes().endswith(torn)

    tail = LogTail(path)
    first = tail.poll()
    assert [e.ac_id for e in first] == ["ac-1"]  # type: ignore[attr-defined]
    assert tail.malformed == 0  # the fragment has no \n yet: not consumed, not judged

    # The next writer (another process) starts a fresh line before its own.
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from uh_core.events.writer import EventLog;"
            "from uh_core.models.events import AcceptanceChecked;"
            "EventLog(Path(sys.argv[1]), mission_id='m1', run_id='r1')"
            ".emit(AcceptanceChecked(ac_id='ac-3', status='failed', exit_code=1))",
            str(path),
        ],
        check=True,
    )
    raw = path.read_bytes()
    assert torn + b"\n" + b'{"event":"acceptance.checked"' in raw

    after = tail.poll()
    assert len(after) == 1
    event = after[0]
    assert isinstance(event, AcceptanceChecked)
    assert (event.ac_id, event.status, event.exit_code, event.run_id) == ("ac-3", "failed", 1, "r1")
    assert tail.malformed == 1  # the torn fragment, counted, never an event

    events, malformed = read_events(path)
    assert [e.ac_id for e in events] == ["ac-1", "ac-3"]  # type: ignore[attr-defined]
    assert malformed == 1


def test_writer_after_a_complete_line_missing_its_newline(tmp_path: Path) -> None:
    """Another writer left a whole object without ``\\n``: both events survive."""
    path = tmp_path / "events.ndjson"
    path.write_bytes(b'{"event":"foreign.thing","ts":"2024-01-01T00:00:00Z"}')
    append_event(path, AcceptanceChecked(ac_id="ac-1", status="passed"))
    events, malformed = read_events(path)
    assert [e.event for e in events] == ["foreign.thing", "acceptance.checked"]
    assert malformed == 0


def test_appends_to_empty_file_without_a_leading_newline(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "events.ndjson"
    append_line(path, b'{"event":"a"}\n')
    path.write_bytes(b"")
    append_line(path, b'{"event":"b"}\n')
    assert path.read_bytes() == b'{"event":"b"}\n'


def test_emit_stamps_ids_and_timestamp(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    log = EventLog(path, mission_id="m1", run_id="verify-1")
    event = log.emit(AcceptanceChecked(ac_id="ac-1", status="passed"))
    assert event.mission_id == "m1" and event.run_id == "verify-1"
    assert TIMESTAMP.match(event.timestamp)
    # An id already set on the event is kept.
    log.emit(AcceptanceChecked(ac_id="ac-2", status="passed", run_id="other", mission_id="m2"))
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert list(lines[0])[:4] == ["event", "timestamp", "mission_id", "run_id"]
    assert lines[0]["timestamp"] == event.timestamp
    assert (lines[1]["mission_id"], lines[1]["run_id"]) == ("m2", "other")


def test_encode_event_is_one_utf8_line_even_with_newlines_in_payload() -> None:
    message = "line one\nline two\r\u2028 — é 🚀"
    data = encode_event(RuntimeProgress(runtime="r", message=message, extra_key={"a": [1]}))
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    decoded = json.loads(data.decode("utf-8"))
    assert decoded["message"] == message
    assert decoded["extra_key"] == {"a": [1]}
    assert TIMESTAMP.match(decoded["timestamp"])


def test_round_trip_of_unknown_event(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    append_event(path, UnknownEvent(event="future.thing", answer=42))
    (event,), malformed = read_events(path)
    assert isinstance(event, UnknownEvent) and event.event == "future.thing"
    assert event.model_extra == {"answer": 42}
    assert malformed == 0


@pytest.mark.parametrize("bad", [b'{"event":"a"}', b'{"event":"a"}\n{"event":"b"}\n', b""])
def test_append_line_refuses_anything_but_one_line(tmp_path: Path, bad: bytes) -> None:
    path = tmp_path / "events.ndjson"
    with pytest.raises(EventLogError):
        append_line(path, bad)
    assert not path.exists()


def test_unwritable_log_raises_event_log_error(tmp_path: Path) -> None:
    target = tmp_path / "a-directory"
    target.mkdir()
    with pytest.raises(EventLogError, match="cannot open event log"):
        append_line(target, b'{"event":"a"}\n')
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(EventLogError):
        append_line(blocker / "events.ndjson", b'{"event":"a"}\n')


def test_writer_does_not_leak_descriptors(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    before = len(os.listdir("/proc/self/fd"))
    for n in range(200):
        append_event(path, AcceptanceChecked(ac_id=f"ac-{n}", status="passed"))
    assert len(os.listdir("/proc/self/fd")) == before


# --- EventLog keeps one descriptor ----------------------------------------------------------


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_event_log_holds_one_descriptor_and_releases_it(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    before = _fds()
    with EventLog(path, mission_id="m1") as log:
        for n in range(50):
            log.emit(AcceptanceChecked(ac_id=f"ac-{n}", status="passed"))
        assert _fds() == before + 1
    assert _fds() == before
    # Emitting after close opens it again; close is idempotent.
    log.emit(AcceptanceChecked(ac_id="ac-late", status="passed"))
    log.close()
    log.close()
    assert _fds() == before
    events, malformed = read_events(path)
    assert len(events) == 51 and malformed == 0


def test_event_log_follows_a_replaced_or_deleted_file(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    with EventLog(path, mission_id="m1") as log:
        log.emit(AcceptanceChecked(ac_id="ac-1", status="passed"))
        # Rotated: the old file moves away, the next event starts the new one.
        path.rename(tmp_path / "events.ndjson.1")
        log.emit(AcceptanceChecked(ac_id="ac-2", status="passed"))
        # Replaced atomically by another file (say, a copy with a torn last line).
        other = tmp_path / "other"
        other.write_bytes(b'{"event":"foreign.thing"}')
        other.replace(path)
        log.emit(AcceptanceChecked(ac_id="ac-3", status="passed"))
        # Deleted: created again.
        path.unlink()
        log.emit(AcceptanceChecked(ac_id="ac-4", status="passed"))
        # Truncated in place: the same file, written from its start without a stray newline.
        log.emit(AcceptanceChecked(ac_id="ac-5", status="passed"))
        path.write_bytes(b"")
        log.emit(AcceptanceChecked(ac_id="ac-6", status="passed"))
    rotated, _ = read_events(tmp_path / "events.ndjson.1")
    assert [e.ac_id for e in rotated] == ["ac-1"]  # type: ignore[attr-defined]
    assert path.read_bytes().startswith(b'{"event":"acceptance.checked"')
    events, malformed = read_events(path)
    assert [getattr(e, "ac_id", None) for e in events] == ["ac-6"] and malformed == 0


def test_event_log_replaced_file_keeps_the_newline_repair(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    with EventLog(path, mission_id="m1") as log:
        log.emit(AcceptanceChecked(ac_id="ac-1", status="passed"))
        other = tmp_path / "other"
        other.write_bytes(b'{"event":"foreign.thing"}')
        other.replace(path)
        log.emit(AcceptanceChecked(ac_id="ac-2", status="passed"))
    events, malformed = read_events(path)
    assert [e.event for e in events] == ["foreign.thing", "acceptance.checked"]
    assert malformed == 0


def test_event_log_shared_by_threads_never_interleaves(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "events.ndjson"
    log = EventLog(path, mission_id="m1")

    def write(name: str) -> None:
        for seq in range(300):
            pad = "y" * ((seq * 53) % 5000)
            log.emit(RuntimeProgress(runtime=name, message=f"{name}:{seq}:{pad}", seq=seq))

    threads = [threading.Thread(target=write, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    log.close()
    seen: dict[str, list[int]] = {}
    for line in path.read_bytes().split(b"\n")[:-1]:
        data = json.loads(line)
        seen.setdefault(data["runtime"], []).append(data["seq"])
    assert seen == {f"t{n}": list(range(300)) for n in range(4)}


def test_event_log_unwritable_path_raises_and_recovers(tmp_path: Path) -> None:
    target = tmp_path / "a-directory"
    target.mkdir()
    log = EventLog(target)
    with pytest.raises(EventLogError, match="cannot open event log"):
        log.emit(AcceptanceChecked(ac_id="ac-1", status="passed"))
    target.rmdir()
    log.emit(AcceptanceChecked(ac_id="ac-2", status="passed"))
    log.close()
    events, _ = read_events(target)
    assert [e.ac_id for e in events] == ["ac-2"]  # type: ignore[attr-defined]
