"""Fingerprints of paths: never followed, never blocked on, never skipped silently.

A fingerprint is one string saying what a path is now:

- ``file <perm> <size> <sha256>`` for a regular file (``perm`` in octal, e.g. ``755``),
- ``symlink:<target>`` for a symbolic link (never followed),
- ``dir`` for a directory,
- ``fifo``, ``socket``, ``char-device``, ``block-device`` for the rest (never opened),
- ``absent`` when nothing is there, ``error:<ERRNO>`` when it cannot be read.

Regular files are opened with ``O_NOFOLLOW | O_NONBLOCK`` and checked again on the open
descriptor before a byte is read, so a FIFO (or a link) swapped in after the ``lstat``
neither hangs the snapshot nor is followed. Content is hashed in chunks of at most 1 MiB,
whatever the file's size.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ABSENT = "absent"
DIR = "dir"
CHUNK = 1 << 20
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class FileInfo:
    """A ``file …`` fingerprint taken apart."""

    perm: int
    size: int
    sha256: str


def parse_file(fingerprint: str | None) -> FileInfo | None:
    """The parts of a regular file's fingerprint; None for anything else."""
    if fingerprint is None or not fingerprint.startswith("file "):
        return None
    _, perm, size, digest = fingerprint.split(" ", 3)
    return FileInfo(int(perm, 8), int(size), digest)


def kind_of(fingerprint: str) -> str:
    """``file``, ``symlink``, ``dir``, ``fifo``, … (the first word of a fingerprint)."""
    return fingerprint.split(" ", 1)[0].split(":", 1)[0]


def error_text(exc: OSError) -> str:
    code = exc.errno or 0
    return f"error:{errno.errorcode.get(code, str(code))}"


def _special(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode):
        return "char-device"
    if stat.S_ISBLK(mode):
        return "block-device"
    return f"special:{stat.S_IFMT(mode):o}"


def fingerprint(path: Path | str) -> str:
    """What ``path`` is now (see the module doc); symlinks are described, not followed."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT
    except OSError as exc:
        return error_text(exc)
    if stat.S_ISLNK(st.st_mode):
        try:
            return f"symlink:{os.readlink(path)}"
        except OSError as exc:
            return error_text(exc)
    if stat.S_ISDIR(st.st_mode):
        return DIR
    if not stat.S_ISREG(st.st_mode):
        return _special(st.st_mode)
    return _hash_regular(path)


def _open_regular(path: Path | str) -> int | str:
    """A descriptor on ``path`` if it is a regular file, else its fingerprint."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # became a symlink since the lstat
            return fingerprint(path)
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return ABSENT
        return error_text(exc)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        return DIR if stat.S_ISDIR(mode) else _special(mode)
    return fd


def _hash_regular(path: Path | str) -> str:
    opened = _open_regular(path)
    if isinstance(opened, str):
        return opened
    fd = opened
    try:
        st = os.fstat(fd)
        digest = hashlib.sha256()
        size = 0
        want = min(st.st_size + 1, CHUNK)  # a small file: one read, then the empty one
        while chunk := os.read(fd, want):
            digest.update(chunk)
            size += len(chunk)
            want = CHUNK
    except OSError as exc:
        return error_text(exc)
    finally:
        os.close(fd)
    return f"file {stat.S_IMODE(st.st_mode):o} {size} {digest.hexdigest()}"


def read_small(path: Path, limit: int = 4096) -> str | None:
    """The first ``limit`` bytes of a regular file as text; None for anything else."""
    opened = _open_regular(path)
    if isinstance(opened, str):
        return None
    try:
        return os.read(opened, limit).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(opened)


def prefixes_match(path: Path, first: FileInfo, second: FileInfo) -> bool:
    """Whether ``path`` now starts with ``second``'s bytes and those start with ``first``'s.

    One pass over the first ``second.size`` bytes: the hash at ``first.size`` must be
    ``first.sha256`` and the hash at ``second.size`` must be ``second.sha256``. Bytes after
    ``second.size`` (appended since) are not read.
    """
    if first.size > second.size:
        return False
    opened = _open_regular(path)
    if isinstance(opened, str):
        return False
    fd = opened
    digest = hashlib.sha256()
    done = 0
    try:
        for stop, expected in ((first.size, first.sha256), (second.size, second.sha256)):
            while done < stop:
                chunk = os.read(fd, min(CHUNK, stop - done))
                if not chunk:
                    return False  # shorter now than it was
                digest.update(chunk)
                done += len(chunk)
            if digest.hexdigest() != expected:
                return False
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def walk(base: Path, prefix: str, skip: Callable[[str], bool] | None = None) -> dict[str, str]:
    """Every non-directory under ``base`` by ``prefix/relative/path`` (posix) → fingerprint.

    Directories are descended without following links; ``skip`` is asked about every
    entry, directories included (a skipped directory is not descended). A directory that
    cannot be listed is recorded as ``error:…`` under its own name, never left out.
    """
    found: dict[str, str] = {}
    stack = [(base, prefix)]
    while stack:
        folder, rel = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except (FileNotFoundError, NotADirectoryError):
            now = fingerprint(folder)  # replaced since its parent was listed (gone: its
            if now != ABSENT:  # files are simply not there)
                found[rel] = now
            continue
        except OSError as exc:
            found[rel] = error_text(exc)
            continue
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            if skip is not None and skip(name):
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                stack.append((Path(entry.path), name))
            else:
                found[name] = fingerprint(entry.path)
    return found
