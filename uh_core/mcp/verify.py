"""``verify_mission``: ``uh-core verify ID --json`` as a subprocess (as the dashboard starts
it), its progress read from the mission's event log while it runs, one notification per
required check and per criterion; cancelled as Ctrl-C would (the verify records what it
knew, ``interrupted``).

The command writes its result to a file, never a pipe, and events are read by byte offset
in bounded slices, so a huge mission streams and the server's memory stays bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from uh_core.events.reader import LogTail
from uh_core.layout import Layout
from uh_core.mcp.calls import tool_error, uh_core_argv
from uh_core.models.events import (
    AcceptanceChecked,
    CheckChecked,
    VerificationFinished,
    VerificationStarted,
)
from uh_core.proc.spawn import job_signals_preexec

Progress = Callable[[float, float | None, str], Awaitable[None]]
POLL_S = 0.1
FIRST_POLL_S = 0.005
SLICE = 1 << 20  # bytes of events read at a time
RESULT_CAP = 16 << 20  # a --json result larger than this is summarised, not returned
STOP_GRACE_S = 30.0


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


async def verify(layout: Layout, argv: list[str], mission_id: str, progress: Progress) -> Any:
    """Run ``uh-core verify`` (``argv`` after the program); return its JSON document."""
    from uh_core.ids import check_id

    check_id(mission_id)
    events = layout.mission_events(mission_id)
    tail = LogTail(events, offset=_size(events))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [*uh_core_argv(), *argv],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            # SIGINT is how it is cancelled: at its default even when this server was
            # started with it ignored (a background job)
            preexec_fn=job_signals_preexec(),
        )
        state = _Progress(progress)
        try:
            delay = FIRST_POLL_S  # a quick verify is answered quickly, a long one polled
            while proc.poll() is None:
                await state.feed(tail)
                await anyio.sleep(delay)
                delay = min(POLL_S, delay * 1.5)
            await state.feed(tail)
        finally:
            if proc.poll() is None:  # the caller cancelled: stop it as Ctrl-C would
                with anyio.CancelScope(shield=True):
                    await _stop(proc)
        return _result(proc.returncode, out, err, state.finished)


class _Progress:
    def __init__(self, report: Progress) -> None:
        self.report = report
        self.total: float | None = None
        self.done = 0
        self.finished: VerificationFinished | None = None

    async def feed(self, tail: LogTail) -> None:
        while True:
            batch = tail.poll(SLICE)
            if not batch:
                return
            for event in batch:
                await self.one(event)

    async def one(self, event: Any) -> None:
        if isinstance(event, VerificationStarted):
            self.total = float(event.total_checks + event.total_acceptance * event.repeat)
            await self.report(0, self.total, "verification started")
        elif isinstance(event, CheckChecked):
            self.done += 1
            await self.report(self.done, self.total, f"check {event.name}: {event.status}")
        elif isinstance(event, AcceptanceChecked):
            self.done += 1
            await self.report(self.done, self.total, f"{event.ac_id}: {event.status}")
        elif isinstance(event, VerificationFinished):
            self.finished = event


async def _stop(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGINT, STOP_GRACE_S), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, sig)
        with anyio.move_on_after(wait):
            while proc.poll() is None:
                await anyio.sleep(POLL_S)
            return


def _result(code: int, out: Any, err: Any, finished: VerificationFinished | None) -> Any:
    if code not in (0, 1):
        err.seek(0)
        lines = [ln for ln in err.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        last = lines[-1] if lines else f"uh-core verify exited with {code}"
        raise tool_error(last.removeprefix("uh-core: error: "))
    size = out.seek(0, os.SEEK_END)
    if size > RESULT_CAP:
        return {
            "status": finished.status if finished else None,
            "summary": finished.summary if finished else {},
            "artifact": finished.artifact if finished else None,
            "note": f"the full result is {size} bytes: read the verification record resource",
        }
    out.seek(0)
    return json.loads(out.read())
