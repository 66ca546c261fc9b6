"""Documents read once per change: a stat-keyed cache, and a file that does not read as a value.

A refresh re-reads only files whose inode, size or mtime changed. A file that exists and
does not load becomes ``Failed`` (its one-line reason, naming the file), never an exception:
the caller shows it on its row and the rest keeps working.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pydantic

from uh_core.errors import UhError

T = TypeVar("T")


@dataclass(frozen=True)
class Failed:
    """A file that exists and does not read: the one-line reason."""

    message: str


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def reason(exc: Exception, display: str) -> str:
    """One line naming the file (``display``), the field and what is wrong."""
    if isinstance(exc, UhError):
        return exc.one_line()
    if isinstance(exc, pydantic.ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(document)"
        return f"{display}: {where}: {first['msg']}"
    return f"{display}: {exc}"


class FileCache:
    """Loads a file again only when its inode, size or mtime changed."""

    def __init__(self) -> None:
        self._items: dict[Path, tuple[Any, Any]] = {}

    def load(
        self,
        path: Path,
        loader: Callable[[Path], T],
        display: str,
        also: tuple[Path, ...] = (),
    ) -> T | Failed | None:
        """The loaded value, ``Failed`` when it does not read, None when there is no file.
        ``also``: other files the loader reads; a change to any of them (or one appearing
        or going) loads it again."""
        first = _signature(path)
        if first is None:
            self._items.pop(path, None)
            return None
        sig = (first, *(_signature(p) for p in also)) if also else first
        hit = self._items.get(path)
        if hit is not None and hit[0] == sig:
            value: T | Failed = hit[1]
            return value
        try:
            value = loader(path)
        except FileNotFoundError:
            self._items.pop(path, None)
            return None
        except (UhError, pydantic.ValidationError, ValueError, OSError) as exc:
            value = Failed(reason(exc, display))
        self._items[path] = (sig, value)
        return value
