"""The fast history fold (``uh_core.events.history``) leaves every fold exactly as the
event-by-event fold does, whatever the log holds: runs of progress lines of several runtimes
and runs, blank messages, other events between them, foreign spellings, malformed lines."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uh_core.events.block import fold_block
from uh_core.events.fold import MissionFold
from uh_core.events.history import fold_lines
from uh_core.events.reader import LogTail, parse_event
from uh_core.events.writer import encode_event
from uh_core.models.events import (
    AcceptanceChecked,
    AcceptanceStarted,
    HarnessAttemptStarted,
    HarnessRequirementStarted,
    RuntimeFinished,
    RuntimeProgress,
    RuntimeStarted,
    VerificationStarted,
)

RUNTIMES = ["alpha", "beta"]
RUNS = ["r1", "r2", None]
MESSAGES = [
    "",
    "  ",
    "step",
    "step\\n",
    "\\t",
    "last word",
    'quote " inside',
    "ü",
    "\u2003",
    "\n",
    "x\ty",
]


def _line(kind: int, runtime: int, run: int, message: int, n: int) -> bytes:
    stamp = f"2026-01-15T12:00:{n // 1000 % 60:02d}.{n % 1000:03d}Z"
    name, run_id = RUNTIMES[runtime % 2], RUNS[run % 3]
    common = {"timestamp": stamp, "mission_id": "m", "run_id": run_id}
    text = MESSAGES[message % len(MESSAGES)]
    events = [
        lambda: RuntimeProgress(runtime=name, kind="log", message=text, **common),
        lambda: RuntimeProgress(runtime=name, kind="log", message=text, **common),
        lambda: RuntimeProgress(runtime=name, kind="log", message=text, **common),
        lambda: RuntimeStarted(runtime=name, sandbox_id="s", **common),
        lambda: RuntimeFinished(runtime=name, status="succeeded", **common),
        lambda: VerificationStarted(total_acceptance=2, **common),
        lambda: AcceptanceStarted(ac_id="a", index=0, total=2, **common),
        lambda: AcceptanceChecked(ac_id="a", status="passed", **common),
        lambda: HarnessRequirementStarted(branch="harness/m", **common),
        lambda: HarnessAttemptStarted(attempt=1, **common),
    ]
    if kind == len(events):
        return b'{"event":"runtime.progress","broken'  # malformed
    if kind == len(events) + 1:  # the TypeScript uh's spelling: parsed the slow way
        return b'{"type":"runtime.progress","ts":"T","runtime":"alpha","message":"ts"}'
    if kind == len(events) + 2:  # blank and whitespace-only lines (a reader skips them)
        return b" " * (message % 2)
    own = encode_event(events[0]()).rstrip(b"\n")
    if kind == len(events) + 3:  # a line that ends in "\r": not in uh's shape
        return own + b"\r"
    if kind == len(events) + 4:  # another run's key nested in a foreign field, at the end
        other = RUNS[(run + 1) % 3]
        nested = b',"x":{"a":1,"run_id":"%s","runtime":"%s","kind":"y"}}' % (
            str(other).encode(),
            name.encode(),
        )
        return own[:-1] + nested
    if kind == len(events) + 5:  # fields in another order: read line by line
        return b'{"event":"runtime.progress","runtime":"%s","timestamp":"%s","message":"o"}' % (
            name.encode(),
            stamp.encode(),
        )
    return encode_event(events[kind]()).rstrip(b"\n")


ITEMS = st.lists(
    st.tuples(st.integers(0, 15), st.integers(0, 1), st.integers(0, 2), st.integers(0, 7)),
    max_size=60,
)


def _slow(lines: list[bytes], tmp: Path) -> tuple[MissionFold, int]:
    path = tmp / "events.ndjson"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    tail, fold = LogTail(path), MissionFold("m")
    for event in tail.poll():
        fold.apply(event)
    return fold, tail.malformed


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(items=ITEMS, cut=st.integers(0, 60))
def test_the_fast_fold_equals_the_event_by_event_fold(
    items: list, cut: int, tmp_path: Path
) -> None:
    lines = [_line(*item, n) for n, item in enumerate(items)]
    slow, slow_bad = _slow(lines, tmp_path)
    written = [line for line in lines if line.strip()]
    fast = MissionFold("m")
    folded, bad = fold_lines(written, fast)
    _same(fast, slow)
    assert bad == slow_bad
    assert folded + bad == len(written)
    block = MissionFold("m")
    folded, bad = fold_block(b"".join(line + b"\n" for line in lines), block)
    _same(block, slow)
    assert bad == slow_bad
    assert folded + bad == len(written)
    # block by block, as a feed folds a log, the keys of one block carried to the next
    halves, keys, total = MissionFold("m"), set[bytes](), 0
    for part in (lines[:cut], lines[cut:]):
        folded, bad = fold_block(b"".join(line + b"\n" for line in part), halves, keys)
        total += folded + bad
    _same(halves, slow)
    assert total == len(written)


def _same(fast: MissionFold, slow: MissionFold) -> None:
    assert dataclasses.asdict(fast.verify) == dataclasses.asdict(slow.verify)
    assert {k: dataclasses.asdict(v) for k, v in fast.runtimes.items()} == {
        k: dataclasses.asdict(v) for k, v in slow.runtimes.items()
    }
    assert (fast.harness and dataclasses.asdict(fast.harness)) == (
        slow.harness and dataclasses.asdict(slow.harness)
    )


def test_a_long_run_of_progress_decodes_only_what_the_fold_keeps() -> None:
    lines = [_line(3, 0, 0, 2, 0)]  # alpha started
    lines += [_line(0, n % 2, 0, 2 if n % 3 else 0, n + 1) for n in range(10_000)]
    fold = MissionFold("m")
    decoded = []
    original = fold.apply

    def counting(event):  # type: ignore[no-untyped-def]
        decoded.append(event)
        original(event)

    fold.apply = counting  # type: ignore[method-assign]
    folded, bad = fold_lines(lines, fold)
    assert (folded, bad) == (len(lines), 0)
    assert len(decoded) <= 5  # started, and per runtime its last line and last said line
    assert fold.verify.events == len(lines)
    assert fold.runtimes["alpha"].last_message == "step"


def test_a_block_decodes_only_what_the_fold_keeps_and_learns_its_keys() -> None:
    """Three runtimes interleaved over 30,000 lines, in three blocks: after the first
    block has learnt the keys, each block decodes per key at most its last line and its
    last line that says something, and the fold is the event-by-event one."""
    lines = [_line(3, 0, 0, 2, 0)]
    runtimes = ["alpha", "beta", "gamma"]
    for n in range(30_000):
        event = RuntimeProgress(
            runtime=runtimes[n % 3],
            message="" if n % 7 else f"said {n}",
            timestamp="2026-01-15T12:00:00.000Z",
            mission_id="m",
            run_id="r1",
        )
        lines.append(encode_event(event).rstrip(b"\n"))
    fold, keys, decoded = MissionFold("m"), set[bytes](), []
    original = fold.apply

    def counting(event):  # type: ignore[no-untyped-def]
        decoded.append(event)
        original(event)

    fold.apply = counting  # type: ignore[method-assign]
    per_block = []
    for part in (lines[:10_001], lines[10_001:20_001], lines[20_001:]):
        before = len(decoded)
        fold_block(b"".join(line + b"\n" for line in part), fold, keys)
        per_block.append(len(decoded) - before)
    assert len(keys) == 3
    assert per_block[1] <= 6 and per_block[2] <= 6
    reference = MissionFold("m")
    for line in lines:
        reference.apply(parse_event(line))  # type: ignore[arg-type]
    _same(fold, reference)
    assert fold.verify.events == reference.verify.events == len(lines)
