"""Log files and the pipe-to-log streams of lazy logs (a file made on the first byte)."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from pathlib import Path
from typing import BinaryIO

from uh_core.proc.result import snippet_of
from uh_core.safeopen import open_binary, open_regular

_CHUNK = 1 << 20  # bytes moved from a pipe to its log per call
_BIG_PIPE = 1 << 20  # a stream that fills its pipe gets a pipe this large (if allowed)


_LOG_FLAGS = os.O_CREAT | os.O_TRUNC


def open_log(path: Path) -> BinaryIO:
    """A log file, created or emptied; a FIFO, device or symlink at its path is refused
    (``safeopen``), so a planted one can neither block uh nor redirect the log."""
    try:
        return open_binary(path, os.O_WRONLY | _LOG_FLAGS, "wb")  # the caller closes it
    except FileNotFoundError:  # its folder does not exist yet
        path.parent.mkdir(parents=True, exist_ok=True)
        return open_binary(path, os.O_WRONLY | _LOG_FLAGS, "wb")


def create_log(path: Path) -> int:
    """A new, empty log for lazy logs; readable too, so the snippets come from this fd."""
    try:
        return open_regular(path, os.O_RDWR | _LOG_FLAGS)
    except FileNotFoundError:  # its folder does not exist yet
        path.parent.mkdir(parents=True, exist_ok=True)
        return open_regular(path, os.O_RDWR | _LOG_FLAGS)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Stream:
    """One stream under lazy logs: the read end of the command's pipe and its log file,
    created when the first byte arrives. ``drain`` is called only when poll() says the
    pipe is readable, so it never blocks."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd: int | None = fd  # None once the pipe is closed
        self.path = path
        self.log: int | None = None
        self.size = 0
        self.error: OSError | None = None  # the log could not be written: the rest is dropped
        self._splice = hasattr(os, "splice")  # pipe to file without a copy through Python
        self._grown = False

    def drain(self) -> None:
        assert self.fd is not None
        if self.log is not None and self._splice and self.error is None:
            try:
                moved = os.splice(self.fd, self.log, _CHUNK)
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                    self.error = exc
                self._splice = False  # this file system cannot: copy from now on
            else:
                self._took(moved)
                return
        chunk = os.read(self.fd, _CHUNK)
        self._took(len(chunk))
        if not chunk or self.error is not None:
            return
        try:
            if self.log is None:
                self.log = create_log(self.path)
            _write_all(self.log, chunk)
        except OSError as exc:
            self.error = exc

    def _took(self, count: int) -> None:
        if not count:  # end of file: every writer is gone
            self.close_pipe()
            return
        self.size += count
        if count >= 65536 and not self._grown:  # it fills a default pipe: give it a larger one
            self._grown = True
            assert self.fd is not None
            with contextlib.suppress(OSError, AttributeError):
                fcntl.fcntl(self.fd, fcntl.F_SETPIPE_SZ, _BIG_PIPE)

    def close_pipe(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def close(self) -> None:
        """Close the pipe and the log without reading anything back (an abandoned run)."""
        self.close_pipe()
        if self.log is not None:
            with contextlib.suppress(OSError):
                os.close(self.log)
            self.log = None

    def finish(self, limit: int) -> tuple[str, int]:
        """Close the pipe and the log; the snippet of what was written and the byte count."""
        self.close_pipe()
        if self.log is None:
            return "", self.size
        try:
            text, _ = snippet_of(self.log, os.fstat(self.log).st_size, limit)
        finally:
            os.close(self.log)
            self.log = None
        return text, self.size
