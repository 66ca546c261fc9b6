"""Ledger rows by signature: in memory, then in the derived index, then from the file.

A reader asks for the rows of every ledger on each refresh; a ledger whose inode, size and
mtime are those of a known entry is not read again, in this process (memory) or in the
next (``uh_core.workspace.index``). A ledger that does not read is a row saying so
(``unreadable`` with its reason), never an exception, and never stored.

What readers want of them all together (``Ledgers``: the runs, each mission's outcomes and
latest row) is stored too, under every ledger's signature at once: a start at which no
ledger changed reads one row, not one per run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pydantic

from uh_core.errors import NotFoundError, UhError
from uh_core.layout import Layout
from uh_core.workspace.files import reason
from uh_core.workspace.index import Index, signature
from uh_core.workspace.ledger_view import LedgerEntry, Ledgers, aggregate, derive
from uh_core.workspace.state import LedgerView

if TYPE_CHECKING:
    from pydantic import TypeAdapter

KIND = "ledger"
ALL = "ledgers"  # the aggregate's kind (one row, key "all")
_ADAPTER: TypeAdapter[LedgerEntry] | None = None
_ALL_ADAPTER: TypeAdapter[Ledgers] | None = None


def all_adapter() -> TypeAdapter[Ledgers]:
    global _ALL_ADAPTER
    if _ALL_ADAPTER is None:
        _ALL_ADAPTER = pydantic.TypeAdapter(Ledgers)
    return _ALL_ADAPTER


def adapter() -> TypeAdapter[LedgerEntry]:
    global _ADAPTER
    if _ADAPTER is None:
        _ADAPTER = pydantic.TypeAdapter(LedgerEntry)
    return _ADAPTER


class LedgerRows:
    def __init__(self, layout: Layout, index: Index | None = None) -> None:
        self.layout = layout
        self.index = index
        self._mem: dict[Path, tuple[str, LedgerEntry]] = {}
        self._stored: dict[str, tuple[str, str]] | None = None
        self.derived = 0  # ledgers read from their files (for tests and benchmarks)
        self._all: tuple[str, Ledgers] | None = None  # the aggregate and its signature

    def ledgers(self, paths: list[Path]) -> Ledgers:
        """Every ledger's rows together: the stored aggregate when no ledger changed."""
        key = "\n".join(f"{p.name} {signature([p])}" for p in paths)
        if self._all is not None and self._all[0] == key:
            return self._all[1]
        found = self.index.entries(ALL).get("all") if self.index is not None else None
        value: Ledgers | None = None
        if found is not None and found[0] == key:
            try:
                value = all_adapter().validate_json(found[1])
            except pydantic.ValidationError:
                value = None
        if value is None:
            value = aggregate(self.read(paths))
            unreadable = any(run.problem for run in value.runs)
            if self.index is not None and not unreadable:
                now = "\n".join(f"{p.name} {signature([p])}" for p in paths)
                if now == key:  # no ledger changed while they were read
                    self.index.put(ALL, "all", key, all_adapter().dump_json(value).decode())
                    self.index.flush()
        self._all = (key, value)
        return value

    def read(self, paths: Iterable[Path]) -> list[LedgerEntry]:
        out: list[LedgerEntry] = []
        seen: set[Path] = set()
        for path in paths:
            seen.add(path)
            key = signature([path])
            if key == "-":
                continue
            hit = self._mem.get(path)
            if hit is not None and hit[0] == key:
                out.append(hit[1])
                continue
            entry = self._from_index(path, key)
            if entry is None:
                entry = self._derive(path, key)
            if entry is None:
                continue
            self._mem[path] = (key, entry)
            out.append(entry)
        for gone in set(self._mem) - seen:
            del self._mem[gone]
        if self.index is not None:
            self.index.flush()
        return out

    def _from_index(self, path: Path, key: str) -> LedgerEntry | None:
        if self.index is None:
            return None
        if self._stored is None:
            self._stored = self.index.entries(KIND)
        found = self._stored.pop(path.name, None)  # ledgers live in one folder
        if found is None or found[0] != key:
            return None
        try:
            return adapter().validate_json(found[1])
        except pydantic.ValidationError:
            return None  # a row this uh cannot read: derived again, and replaced

    def _derive(self, path: Path, sig: str) -> LedgerEntry | None:
        from uh_core.harness.ledger import read_ledger

        display = self.layout.rel(path)
        try:
            ledger = read_ledger(path)
        except (FileNotFoundError, NotFoundError):
            return None  # removed since it was listed
        except (UhError, pydantic.ValidationError, ValueError, OSError) as exc:
            return LedgerEntry(
                LedgerView(path.stem, status="unreadable", problem=reason(exc, display))
            )
        entry = derive(ledger)
        self.derived += 1
        if self.index is not None and signature([path]) == sig:  # unchanged while read
            self.index.put(KIND, path.name, sig, adapter().dump_json(entry).decode())
        return entry
