"""Touched paths of a unified diff, streaming, at close to ``grep`` speed.

Handles git diffs and plain ``diff -u``/``diff -ruN`` output; additions and deletions
(``/dev/null``), renames and copies (both names), mode-only changes, binary files (``Binary
files … differ`` and ``GIT binary patch``), names with spaces (also unquoted, with git's
trailing tab), C-quoted names with octal escapes (decoded as UTF-8), ``--no-prefix`` and
custom prefixes, CRLF line ends, and input that starts with commit headers
(``git format-patch``, ``git log -p``). How: :mod:`uh_core.diff.reader`.

Empty input (or only blank lines) names no paths and is not an error; non-empty input with
no file header at all raises :class:`~uh_core.errors.DiffError`, as does a malformed header
or hunk where the reader has to count (see the reader's notes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from uh_core.diff.reader import Reader
from uh_core.errors import DiffError, NotFoundError

CHUNK_BYTES = 1 << 20  # small enough to stay in the CPU cache across the scans of a buffer


@dataclass(frozen=True)
class PatchSummary:
    paths: list[str]  # every touched path once, in order of first appearance
    files: int  # file sections (a rename is one section with two paths)


def _read_all(reader: Reader, read: Callable[[int], bytes], chunk_bytes: int) -> PatchSummary:
    """Drive ``reader`` over data from ``read`` (which returns bytes)."""
    left = b""
    while True:
        data = read(chunk_bytes)
        if not data:
            break
        buf = left + data if left else data
        end = buf.rfind(b"\n") + 1
        keep = reader.chunk(buf, end) if end else 0
        left = buf[keep:]
    return _finish(reader, bytearray(left), len(left))


def _readinto_all(
    reader: Reader, readinto: Callable[[memoryview], int | None], chunk_bytes: int
) -> PatchSummary:
    """Drive ``reader`` over one reused buffer (no fresh allocation per read: faster)."""
    buf = bytearray(2 * chunk_bytes)
    size = 0  # bytes held: what the last buffer left over, then what was read
    while True:
        if len(buf) - size < chunk_bytes:  # a long line or a carried hunk: make room
            buf.extend(bytes(len(buf)))
        got = readinto(memoryview(buf)[size : size + chunk_bytes])
        if not got:
            break
        size += got
        end = buf.rfind(b"\n", 0, size) + 1
        keep = reader.chunk(buf, end) if end else 0
        if keep:
            buf[: size - keep] = buf[keep:size]
            size -= keep
    return _finish(reader, buf, size)


def _finish(reader: Reader, buf: bytearray, size: int) -> PatchSummary:
    if size:
        if buf[size - 1 : size] != b"\n":
            buf[size : size + 1] = b"\n"
            size += 1
        reader.chunk(buf, size, final=True)
    machine = reader.machine
    machine.finish()
    return PatchSummary(machine.decoded(), machine.files)


def scan_stream(
    stream: BinaryIO, *, source: str = "<stdin>", chunk_bytes: int = CHUNK_BYTES
) -> PatchSummary:
    """Touched paths of the diff read from a binary stream (stdin, a pipe)."""
    readinto = getattr(stream, "readinto", None)
    if readinto is not None:
        return _readinto_all(Reader(source, None), readinto, chunk_bytes)
    return _read_all(Reader(source, None), stream.read, chunk_bytes)


def scan_file(path: Path, *, chunk_bytes: int = CHUNK_BYTES) -> PatchSummary:
    """Touched paths of the diff in ``path``; line numbers for errors are found on demand."""

    def resolve(at: int) -> int:
        count = 0
        with open(path, "rb") as again:
            while at > 0:
                data = again.read(min(at, CHUNK_BYTES))
                if not data:
                    break
                count += data.count(b"\n")
                at -= len(data)
        return count + 1

    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise NotFoundError(f"{path}: no such patch file") from None
    except IsADirectoryError:
        raise DiffError(f"{path}: is a directory, not a patch file") from None
    except OSError as exc:
        raise DiffError(f"{path}: cannot read: {exc.strerror}") from None
    with handle:
        return _readinto_all(Reader(str(path), resolve), handle.readinto, chunk_bytes)


def scan_lines(
    lines: Iterable[bytes], *, source: str = "<patch>", chunk_bytes: int = CHUNK_BYTES
) -> PatchSummary:
    """Touched paths of a diff given as lines (each with or without its ``\\n``)."""
    pending: list[bytes] = []
    size = 0

    def read(_: int) -> bytes:
        nonlocal pending, size
        for line in iterator:
            if not line.endswith(b"\n"):
                line += b"\n"
            pending.append(line)
            size += len(line)
            if size >= chunk_bytes:
                break
        data = b"".join(pending)
        pending, size = [], 0
        return data

    iterator = iter(lines)
    return _read_all(Reader(source, None), read, chunk_bytes)


def touched_paths(lines: Iterable[bytes]) -> list[str]:
    """Every path the diff touches (both sides of renames and copies), once, in order.

    ``lines`` may come from a binary file, ``bytes.splitlines()`` or a generator; memory
    does not grow with their number. Raises DiffError for input that is not a diff;
    empty input is no paths, not an error.
    """
    return scan_lines(lines).paths
