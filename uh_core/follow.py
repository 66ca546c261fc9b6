"""Following a growing file by byte offset: complete lines only, replacement and truncation noticed.

A line is handed out only once its ``\\n`` is on disk (a torn line waits). A file that was
replaced (new inode), truncated, or rewritten from the start (its first bytes changed) is
read again from the beginning. Event logs and agents' JSONL output are both read this way.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from uh_core.safeopen import UnsafePathError, open_binary

_FINGERPRINT = 256  # enough to reach the run id of our own first event line
_CHUNK = 1 << 20
_BLOCK = 1 << 16  # bytes read per step of the backwards scan


@dataclass
class LineFollower:
    path: Path
    offset: int = 0
    resets: int = 0
    _identity: tuple[int, int] | None = None
    _fingerprint: bytes = b""

    def _restart(self) -> None:
        self.offset = 0
        self._fingerprint = b""  # the old file's first bytes say nothing about the new one
        self.resets += 1

    def lines(self, max_bytes: int | None = None) -> Iterator[bytes]:
        """Complete, non-blank lines appended since the last call (without their ``\\n``)."""
        for piece in self._pieces(max_bytes):
            for raw in piece.split(b"\n")[:-1]:
                if raw.strip():
                    yield raw

    def block(self, max_bytes: int | None = None) -> bytes:
        """The complete lines appended since the last call as one block of bytes, each line
        with its ``\\n`` (blank lines included): for readers that scan whole blocks."""
        return b"".join(self._pieces(max_bytes))

    def _pieces(self, max_bytes: int | None) -> Iterator[bytes]:
        """Runs of complete lines (each ending in ``\\n``); the offset moves past each."""
        try:
            handle = open_binary(self.path, os.O_RDONLY, "rb")  # closed by the with below
        except (FileNotFoundError, UnsafePathError):  # not yet, or not a file we follow
            return
        with handle:
            stat = os.fstat(handle.fileno())
            identity = (stat.st_dev, stat.st_ino)
            if (
                self._identity is not None and identity != self._identity
            ) or stat.st_size < self.offset:
                self._restart()
            elif self.offset and self._fingerprint:
                head = os.pread(handle.fileno(), len(self._fingerprint), 0)
                if head != self._fingerprint:
                    self._restart()
            self._identity = identity
            budget = stat.st_size - self.offset
            if max_bytes is not None:
                budget = min(budget, max_bytes)
            handle.seek(self.offset)
            carry = b""
            while budget > 0:
                chunk = handle.read(min(_CHUNK, budget))
                if not chunk:
                    break
                budget -= len(chunk)
                data = carry + chunk
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry = data
                    continue
                carry = data[cut + 1 :]
                consumed = data[: cut + 1]
                if self.offset == 0 and not self._fingerprint:
                    self._fingerprint = consumed[:_FINGERPRINT]
                self.offset += len(consumed)
                yield consumed


def tail_start(path: Path, lines: int) -> int:
    """Byte offset where the last ``lines`` complete lines of ``path`` begin.

    0 when the file has no more than that (or does not exist). A torn last line (no
    ``\\n`` yet) is not counted: it stays after the offset and is read once complete.
    """
    lines = max(lines, 1)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return 0
    try:
        pos = os.fstat(fd).st_size
        seen = 0
        while pos > 0:
            start = max(0, pos - _BLOCK)
            chunk = os.pread(fd, pos - start, start)
            end = len(chunk)
            while True:
                cut = chunk.rfind(b"\n", 0, end)
                if cut < 0:
                    break
                seen += 1
                if seen == lines + 1:
                    return start + cut + 1
                end = cut
            pos = start
        return 0
    finally:
        os.close(fd)
