"""Opening files whose path someone else could have prepared.

Evidence and log files live where an unconfined agent (or code it wrote, run by a check)
could plant something at their path before uh opens it: a FIFO (``open`` would block
forever), a device, or a symlink pointing out of the folder. ``open_regular`` opens with
``O_NOFOLLOW | O_NONBLOCK`` (neither a symlink nor a FIFO can make it wait), checks that what
it opened is a regular file, and only then gives the descriptor back, in blocking mode.
Anything else is refused with an ``UnsafePathError`` naming the path and what was there.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path
from typing import BinaryIO, cast

from uh_core.errors import UhError


class UnsafePathError(UhError):
    """Something other than a regular file stands where uh reads or writes evidence."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def refuse(path: Path, what: str) -> UnsafePathError:
    return UnsafePathError(
        f"{path} is {what}, not a regular file: refused (something was planted at an "
        "evidence path)",
        fix="remove it; uh creates its evidence files itself",
    )


def open_regular(path: Path, flags: int, mode: int = 0o666) -> int:
    """A descriptor on the regular file at ``path`` (created if ``flags`` says so)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: the last component is a symlink
            raise refuse(path, "a symlink") from None
        if exc.errno in (6, 19):  # ENXIO, ENODEV: a FIFO with no reader, a device
            raise refuse(path, "a FIFO or a device") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise refuse(path, _kind(info.st_mode))
        current = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, current & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (at most ``limit``)."""
    fd = open_regular(path, os.O_RDONLY)
    with os.fdopen(fd, "rb") as handle:
        return handle.read() if limit is None else handle.read(limit)


def open_binary(path: Path, flags: int, mode: str) -> BinaryIO:
    """``open_regular`` as a binary file object (``mode``: "rb", "wb", "r+b")."""
    return cast(BinaryIO, os.fdopen(open_regular(path, flags), mode))
