"""How a command ended, where its output is, and the bounded head+tail snippets of a log."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SNIPPET_BYTES = 4096


@dataclass(frozen=True)
class ProcResult:
    """How a command ended and where its output is.

    ``stdout_log``/``stderr_log`` are the paths asked for. With lazy logs a stream that
    printed nothing has no file there: ``stdout_file``/``stderr_file`` say which exist.
    """

    exit_code: int | None  # None when killed by a signal
    signal: int | None
    timed_out: bool
    duration_ms: int
    stdout_log: Path
    stderr_log: Path
    stdout_snippet: str
    stderr_snippet: str
    stdout_bytes: int
    stderr_bytes: int
    lazy_logs: bool = False

    @property
    def stdout_file(self) -> Path | None:
        """The stdout log, or None when lazy logs left it uncreated (nothing printed)."""
        return self.stdout_log if self.stdout_bytes or not self.lazy_logs else None

    @property
    def stderr_file(self) -> Path | None:
        """The stderr log, or None when lazy logs left it uncreated (nothing printed)."""
        return self.stderr_log if self.stderr_bytes or not self.lazy_logs else None


@dataclass(frozen=True)
class Captured:
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False


def snippet(path: Path, limit: int = SNIPPET_BYTES) -> tuple[str, int]:
    """Head and tail of a log (``limit`` bytes each) with a marker of what was cut."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return "", 0
    try:
        return snippet_of(fd, os.fstat(fd).st_size, limit)
    finally:
        os.close(fd)


def _read_at(fd: int, count: int, offset: int) -> bytes:
    parts: list[bytes] = []
    while count > 0:
        part = os.pread(fd, count, offset)
        if not part:
            break
        parts.append(part)
        count -= len(part)
        offset += len(part)
    return b"".join(parts)


def snippet_of(fd: int, size: int, limit: int) -> tuple[str, int]:
    """``snippet`` of the first ``size`` bytes of an open file."""
    if size <= 2 * limit:
        return _read_at(fd, size, 0).decode("utf-8", errors="replace"), size
    head = _read_at(fd, limit, 0)
    tail = _read_at(fd, limit, size - limit)
    omitted = size - 2 * limit
    text = (
        head.decode("utf-8", errors="replace")
        + f"\n… [{omitted} bytes omitted] …\n"
        + tail.decode("utf-8", errors="replace")
    )
    return text, size
