"""A job run in a thread while what it writes streams out: the new whole lines of the
event logs it appends to (read by byte offset, never a line before its newline), its
progress lines, and last its result. The Ray task yields these items to the head; a cancel
arriving meanwhile reaches the job through its ``CancelToken``."""

from __future__ import annotations

import queue
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

from uh_core.errors import UhError
from uh_core.jobs.model import JobResult, StreamItem

_READ_LIMIT = 4 << 20  # per poll and log: a flood is passed on in slices


class Tail:
    """New whole lines of one file since the last call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def lines(self) -> list[bytes]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read(_READ_LIMIT)
        except FileNotFoundError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self.offset += end + 1
        return data[: end + 1].splitlines(keepends=True)


class JobStream:
    def __init__(
        self, work: Callable[[Callable[[str], None]], JobResult], logs: list[Path], job_id: str,
        kind: str,
    ) -> None:  # fmt: skip
        self._work = work
        self._tails = [Tail(path) for path in logs]
        self._progress: queue.Queue[str] = queue.Queue()
        self._result: JobResult | None = None
        self._thread = threading.Thread(target=self._run, name=f"uh-job-{job_id}", daemon=True)
        self._job_id, self._kind = job_id, kind

    def _run(self) -> None:
        try:
            self._result = self._work(self._progress.put)
        except UhError as exc:
            self._result = JobResult(job_id=self._job_id, kind=self._kind, error=exc.one_line())
        except BaseException as exc:  # the worker reports; it never dies silently
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            self._result = JobResult(job_id=self._job_id, kind=self._kind, error=detail)

    def start(self) -> None:
        self._thread.start()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def poll(self, wait_s: float) -> Iterator[StreamItem]:
        """What arrived within ``wait_s`` (at once when the job has ended)."""
        self._thread.join(wait_s)
        finished = self.done  # before reading: every line it wrote is in the files now
        for tail in self._tails:
            lines = tail.lines()
            while lines:
                yield StreamItem(kind="events", lines=lines)
                lines = tail.lines()
        while True:
            try:
                yield StreamItem(kind="progress", text=self._progress.get_nowait())
            except queue.Empty:
                break
        if finished:
            result = self._result or JobResult(
                job_id=self._job_id,
                kind=self._kind,
                error="the job ended without a result",
            )
            yield StreamItem(kind="result", result=result)
