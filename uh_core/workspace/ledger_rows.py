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

import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pydantic

from uh_core.errors import NotFoundError, UhError
from uh_core.layout import Layout
from uh_core.workspace.files import reason
from uh_core.workspace.index import Index, named_signature, signature
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
        self.pending = 0  # ledgers a budgeted read left for the next call
        self._all: tuple[str, Ledgers] | None = None  # the aggregate and its signature

    def ledgers(self, paths: list[Path], budget_s: float | None = None) -> Ledgers:
        """Every ledger's rows together: the stored aggregate when no ledger changed.
        ``budget_s``: derive ledgers from their files for about that long, newest first, and
        leave the rest for the next call (``pending`` says how many): a dashboard's first
        frame does not wait for two thousand ledgers no index knows."""
        key = named_signature(paths)
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
            value = aggregate(self.read(paths, budget_s))
            if self.pending:
                return value  # partial: neither remembered nor stored
            unreadable = any(run.problem for run in value.runs)
            # stored only when no ledger changed while they were read
            if self.index is not None and not unreadable and named_signature(paths) == key:
                self.index.put(ALL, "all", key, all_adapter().dump_json(value).decode())
                self.index.flush()
        self.pending = 0
        self._all = (key, value)
        return value

    def read(self, paths: Iterable[Path], budget_s: float | None = None) -> list[LedgerEntry]:
        """Each ledger's entry, in ``paths``' order; with ``budget_s``, those no memory or
        index holds are derived newest first until the budget is spent (``pending``: the
        ones left out)."""
        listed = list(paths)
        found: dict[Path, LedgerEntry] = {}
        missing: list[tuple[Path, str]] = []
        for path in listed:
            key = signature([path])
            if key == "-":
                continue
            hit = self._mem.get(path)
            entry = hit[1] if hit is not None and hit[0] == key else self._from_index(path, key)
            if entry is None:
                missing.append((path, key))
            else:
                self._mem[path] = (key, entry)
                found[path] = entry
        deadline = None if budget_s is None else time.monotonic() + budget_s
        self.pending = 0
        for index, (path, key) in enumerate(reversed(missing)):
            if index and deadline is not None and time.monotonic() > deadline:  # one at least
                self.pending = len(missing) - index
                break
            derived = self._derive(path, key)
            if derived is not None:
                self._mem[path] = (key, derived)
                found[path] = derived
        for gone in set(self._mem) - set(listed):
            del self._mem[gone]
        if self.index is not None:
            self.index.flush()
        return [found[path] for path in listed if path in found]

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
