"""The derived index: what readers ask for most, kept in SQLite so a start reads no history.

Each entry is a view uh_core derived from files (a mission's row, a harness run's row and
its missions' outcomes), stored as typed JSON under the signatures — inode, size, mtime —
of every file it was derived from. A reader stats those files (cheap), and where the
signatures match it takes the view from here instead of parsing the files; where they do
not, it derives the view from the files as it always did and writes it back.

It is never the source of truth and never trusted past its signatures:

- it lives outside the work tree (``<state dir>/index.sqlite``: ``Layout.state_dir``), so
  no agent's sandbox and no commit carries it;
- its format is a fingerprint of the view types' fields and uh's version: a uh whose views
  differ drops it and starts over, as it does when the file is corrupt or not a database;
- every value is validated against its view type when read (a bad row is a miss);
- any SQLite error makes it a no-op for the rest of the process: readers work without it.

Nothing the gate decides reads it: it serves ``status``, ``mission list``, the dashboard and
MCP. docs/performance.md, "A thousand missions".
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from uh_core.layout import Layout

_BUSY_MS = 200  # another process writing: wait this long, then go on without the index


def stamp(path: Path | str) -> str:
    """One file's inode, size and mtime as ``ino:size:mtime_ns`` (``-``: absent or not
    readable): the unit of every signature here (``store._log_size`` reads it back)."""
    try:
        st = os.stat(path)
    except OSError:
        return "-"
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"


def signature(paths: Sequence[Path | str]) -> str:
    """Inode, size and mtime of each path (``-``: absent), as one string: compared as is."""
    return " ".join(stamp(path) for path in paths)


def named_signature(paths: Sequence[Path]) -> str:
    """Each path's name and signature, a line each: the key of a value derived from many
    files at once (the ledgers' aggregate, ``harness report``: two thousand per start)."""
    out: list[str] = []
    for path in paths:
        text = os.fspath(path)
        out.append(f"{os.path.basename(text)} {stamp(text)}")
    return "\n".join(out)


def _fields(kind: Any, seen: set[Any]) -> list[str]:
    if kind in seen or not dataclasses.is_dataclass(kind):
        return []
    seen.add(kind)
    out = [getattr(kind, "__name__", repr(kind))]
    for f in dataclasses.fields(kind):
        out.append(f"{f.name}:{f.type}")
    return out


def fingerprint(*kinds: type) -> str:
    """A digest of the view types' fields and uh's version: a change to either is a new
    format (the index is dropped and rebuilt)."""
    import typing

    from uh_core import __version__

    seen: set[Any] = set()
    parts = [__version__]
    todo: list[Any] = list(kinds)
    while todo:
        kind = todo.pop()
        parts += _fields(kind, seen)
        if dataclasses.is_dataclass(kind):
            hints = typing.get_type_hints(kind)
            for hint in hints.values():
                todo += [a for a in _flatten(hint) if dataclasses.is_dataclass(a)]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _flatten(hint: Any) -> list[Any]:
    import typing

    args = typing.get_args(hint)
    if not args:
        return [hint]
    return [x for a in args for x in _flatten(a)]


class Index:
    """One repository's index; ``entries(kind)`` reads all of a kind at once."""

    def __init__(self, layout: Layout, fmt: str) -> None:
        self.path = layout.state_dir / "index.sqlite"
        self.fmt = fmt
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[str, str, str, str]] = []
        self.rebuilt: str | None = None  # why it was started over, when it was
        try:
            self._db = self._open()
        except (sqlite3.Error, OSError) as exc:
            self._drop(f"{type(exc).__name__}: {exc}")

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            row = db.execute("SELECT value FROM meta WHERE key='format'").fetchone()
            if row is None or row[0] != self.fmt:
                db.execute("DROP TABLE IF EXISTS derived")
                if row is not None:
                    self.rebuilt = "another format"
            db.execute(
                "CREATE TABLE IF NOT EXISTS derived (kind TEXT, key TEXT, sig TEXT,"
                " value TEXT, PRIMARY KEY (kind, key))"
            )
            db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (self.fmt,))
        except BaseException:
            db.close()
            raise
        return db

    def _drop(self, why: str) -> None:
        """Corrupt, not a database, or unwritable: start over once, else go without."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None
        if self.rebuilt is not None and self.rebuilt.startswith("unusable"):
            return
        self.rebuilt = f"unusable ({why})"
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(f"{self.path}{suffix}")
        try:
            self._db = self._open()
        except (sqlite3.Error, OSError):
            self._db = None

    @property
    def usable(self) -> bool:
        return self._db is not None

    def entries(self, kind: str) -> dict[str, tuple[str, str]]:
        """key → (signature JSON, value JSON) for every entry of ``kind``."""
        if self._db is None:
            return {}
        try:
            rows = self._db.execute(
                "SELECT key, sig, value FROM derived WHERE kind=?", (kind,)
            ).fetchall()
        except sqlite3.Error as exc:
            self._drop(str(exc))
            return {}
        return {key: (sig, value) for key, sig, value in rows}

    def count(self, kind: str) -> int:
        """How many entries of ``kind`` it holds (whatever their signatures)."""
        if self._db is None:
            return 0
        try:
            row = self._db.execute("SELECT COUNT(*) FROM derived WHERE kind=?", (kind,)).fetchone()
        except sqlite3.Error as exc:
            self._drop(str(exc))
            return 0
        return int(row[0])

    def put(self, kind: str, key: str, sig: str, value: str) -> None:
        """Queue one entry; ``flush()`` writes the queue in one transaction."""
        if self._db is not None:
            self._pending.append((kind, key, sig, value))

    def forget(self, kind: str, keys: Sequence[str]) -> None:
        if self._db is None or not keys:
            return
        with contextlib.suppress(sqlite3.Error):
            self._db.executemany(
                "DELETE FROM derived WHERE kind=? AND key=?", [(kind, k) for k in keys]
            )

    def flush(self) -> None:
        if self._db is None or not self._pending:
            self._pending = []
            return
        pending, self._pending = self._pending, []
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany("INSERT OR REPLACE INTO derived VALUES (?, ?, ?, ?)", pending)
            self._db.execute("COMMIT")
        except sqlite3.OperationalError:  # busy: another writer; this is only a cache
            with contextlib.suppress(sqlite3.Error):
                self._db.execute("ROLLBACK")
        except sqlite3.Error as exc:
            self._drop(str(exc))

    def close(self) -> None:
        self.flush()
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None


LIST_ROW = "mission-list-1"  # the version of ``mission list``'s rows (workspace/list_rows.py)
# The version of how the views are derived, where their fields stay the same (a changed field
# changes the fingerprint by itself): 2, a skip no longer replaces a mission's latest outcome.
DERIVATION = "derived-2"


def open_index(layout: Layout) -> Index:
    """The repository's index in this uh's format: the fingerprint of every view it holds."""
    from uh_core.workspace.ledger_view import LedgerEntry
    from uh_core.workspace.state import MissionView

    return Index(layout, fingerprint(MissionView, LedgerEntry) + LIST_ROW + DERIVATION)


def cached_document(
    layout: Layout, kind: str, paths: Sequence[Path], build: Callable[[], Any]
) -> Any:
    """A JSON document derived from ``paths`` alone (``harness report`` from the ledgers and
    the marks): as stored when none of them changed, else built and stored."""
    key = named_signature(paths)
    index = open_index(layout)
    try:
        found = index.entries(kind).get("all")
        if found is not None and found[0] == key:
            try:
                return json.loads(found[1])
            except ValueError:
                pass
        data = build()
        if named_signature(paths) == key:
            index.put(kind, "all", key, json.dumps(data))
        return data
    finally:
        index.close()
