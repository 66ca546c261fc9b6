"""Around every agent: isolation for its launch, the operator's repository snapshotted
before and compared after, and nothing it started left alive.

``AgentGuard`` is used the same way by ``mission run``, ``run-all`` and the harness:

- ``isolation`` (``auto`` | ``bwrap`` | ``none``) is resolved once; under ``bwrap`` the
  adapter launches the agent through ``uh_core.isolation.wrap_argv`` with exactly the
  paths ``writable`` returns (the sandbox, the agent's output folder, its CLI's homes).
  An unconfined run says so (``note``) wherever its result is shown.
- ``start()`` makes this process a subreaper (orphans of the agent become our children),
  remembers the children it already has, and snapshots the operator's repository —
  HEAD, refs, hooks, config, work tree, index, ``.harness/`` — leaving out only what this
  run itself writes meanwhile (sandboxes' records, which concurrent runs write too and
  which are no evidence without their index stamp; the active-run files; event logs may
  grow). The sandbox index is compared entry by entry: the entries that existed, verify
  stamps included, must not change.
- ``finish()`` stops and reaps every process the agent left (``setsid`` and double forks
  included), then compares. Any difference is ``tampered``, each change named. Nothing is
  repaired: the caller stops the run and shows it loudly.
- ``engine`` (``EngineWrites``, one per harness run, shared by the missions running side by
  side): what the engine itself wrote in the operator's repository meanwhile — another
  mission's ``harness/<id>`` created or moved, its archived prompt, the ledger, its sandbox
  index entries. A change is the engine's only when what is there now is exactly the value
  the engine last wrote there (a ref's commit, a file's fingerprint); anything else — the
  same ref moved elsewhere, a file the engine never wrote — stays ``tampered``. Both
  snapshots, and every engine write with its note, hold the registry's lock, so a snapshot
  never sees a write without its note (nor a half-written file).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from uh_core.compat.readers import load_sandbox_index
from uh_core.errors import UhError
from uh_core.isolation import (
    Resolved,
    Survivor,
    Survivors,
    become_subreaper,
    children_of,
    reap_survivors,
    resolve_mode,
)
from uh_core.isolation.bwrap import IsolationMode
from uh_core.layout import Layout
from uh_core.security.change import TamperChange
from uh_core.security.files import ABSENT, fingerprint
from uh_core.security.tamper import RepoSnapshot, compare, snapshot_repo

_PACKAGE = Path(__file__).resolve().parents[2]  # uh itself stays importable in the sandbox


@dataclass
class GuardReport:
    isolation: str  # "bwrap" | "none"
    note: str | None  # why it ran unconfined
    survivors: list[str] = field(default_factory=list)  # what the agent left, now stopped
    tampered: list[str] = field(default_factory=list)  # each change to the operator's repo

    @property
    def clean(self) -> bool:
        return not self.tampered


def _new_log(kind: str, name: str, before: str | None) -> bool:
    """An event log that did not exist yet: uh's own (a mission's first events). Logs are
    never evidence a decision trusts; rewriting an existing one is still a change."""
    return kind == "harness-file" and name.endswith(".ndjson") and before is None


class EngineWrites:
    """The values the engine last wrote in the operator's repository during one run: refs
    (``refs/heads/harness/<id>`` → commit, None when deleted), ``.harness/`` files (path
    relative to the root → fingerprint) and sandbox index entries (id → entry as text, None
    when removed). Thread-safe; write and note inside ``writing()``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.refs: dict[str, str | None] = {}
        self.files: dict[str, str | None] = {}
        self.entries: dict[str, str | None] = {}

    @contextlib.contextmanager
    def writing(self) -> Iterator[EngineWrites]:
        with self.lock:
            yield self

    def ref(self, name: str, value: str | None) -> None:
        with self.lock:
            self.refs[name] = value

    def file(self, root: Path, path: Path, content: bytes | None = None) -> None:
        """Note ``path`` as the engine left it; with ``content``, only if it still holds
        exactly that (an agent's swap in between is not noted, so it stays tampering)."""
        with self.lock:
            rel = Path(os.path.relpath(path, root)).as_posix()
            if content is not None:
                try:
                    if path.read_bytes() != content:
                        return
                except OSError:
                    return
            self.files[rel] = fingerprint(path)

    def entry(self, sandbox_id: str, value: str | None) -> None:
        with self.lock:
            self.entries[sandbox_id] = value

    def owns(self, change: TamperChange) -> bool:
        """The change left exactly what the engine wrote there."""
        with self.lock:
            if change.kind == "ref" and change.name in self.refs:
                return self.refs[change.name] == change.after
            if change.kind == "harness-file" and change.name in self.files:
                noted = self.files[change.name]
                return (None if noted == ABSENT else noted) == change.after
            return False


def resolve(requested: str | None) -> Resolved:
    mode: IsolationMode = "auto" if requested is None else requested  # type: ignore[assignment]
    return resolve_mode(mode)


class AgentGuard:
    def __init__(
        self,
        layout: Layout,
        isolation: Resolved,
        own: set[str] | None = None,
        engine: EngineWrites | None = None,
        reap: Callable[[set[int]], list[Survivor]] | None = None,
    ) -> None:
        self.layout = layout
        self.isolation = isolation
        self.own = own if own is not None else set()  # this run's sandbox ids
        self.engine = engine  # what the engine writes meanwhile (missions side by side)
        # How survivors are stopped: every new child (default), or, beside other missions,
        # only this agent's (uh_core.harness.reap.reap_in).
        self.reap = reap
        self._children: set[int] = set()
        self._before: RepoSnapshot | None = None
        self._index: dict[str, str] = {}

    # --- isolation -------------------------------------------------------------------
    @property
    def confined(self) -> bool:
        return self.isolation.mode == "bwrap"

    def writable(self, worktree: Path, outbox: Path, homes: list[Path]) -> list[str]:
        return [str(p) for p in (worktree, outbox, *homes)]

    def readable(self) -> list[str]:
        return [str(self.layout.root), str(self.layout.sandbox_trees), str(_PACKAGE)]

    # --- the window -------------------------------------------------------------------
    def _skip(self, rel: str) -> bool:
        parts = rel.split("/")
        if len(parts) >= 3 and parts[:2] == [".harness", "sandboxes"]:
            # Sandboxes' records: runs going on at the same time write theirs; none of them
            # is evidence without its index entry's stamp, and the index is compared entry
            # by entry (below).
            return True
        if parts[:3] == [".harness", "runs", "active"]:
            return True  # harness runs' registrations (and a cancel's reason beside them)
        return len(parts) >= 4 and parts[:2] == [".harness", "missions"] and parts[3] == "active"

    def _entries(self) -> dict[str, str]:
        """Other sandboxes' index entries, as text: they must come out unchanged."""
        path = self.layout.sandbox_index
        if not path.exists():
            return {}
        try:
            index = load_sandbox_index(path, self.layout.rel(path))
        except UhError as exc:
            return {"(index)": f"unreadable: {exc.one_line()}"}
        return {
            entry.id: entry.model_dump_json(exclude={"status"})
            for entry in index.sandboxes
            if entry.id not in self.own
        }

    def _quiet(self) -> contextlib.AbstractContextManager[object]:
        """No engine write (with its note) in the middle of a snapshot."""
        return self.engine.writing() if self.engine is not None else contextlib.nullcontext()

    def start(self) -> None:
        become_subreaper()
        self._children = set(children_of(os.getpid()))
        with self._quiet():
            self._before = snapshot_repo(self.layout.root, skip=self._skip)
            self._index = self._entries()

    def survivors(self) -> list[str]:
        """Stop and reap what the agent left (call once every agent process has ended): one
        line each (``pid N: argv``), and a count of those not listed."""
        found = self.reap(self._children) if self.reap is not None else None
        if found is None:
            found = reap_survivors(exclude=self._children)
        return found.lines() if isinstance(found, Survivors) else [s.line() for s in found]

    def finish(self, *, reap: bool = True) -> GuardReport:
        report = GuardReport(self.isolation.mode, self.isolation.note)
        if reap:
            report.survivors = self.survivors()
        if self._before is None:
            return report
        with self._quiet():
            after = snapshot_repo(self.layout.root, skip=self._skip)
            now = self._entries()
            changes = compare(self._before, after)
            engine = self.engine
            report.tampered = [
                change.describe()
                for change in changes
                if not _new_log(change.kind, change.name, change.before)
                and not (engine is not None and engine.owns(change))
            ]
            noted = dict(engine.entries) if engine is not None else {}
        for sandbox_id in sorted(set(self._index) | set(now)):
            if sandbox_id in self.own:
                continue
            before, later = self._index.get(sandbox_id), now.get(sandbox_id)
            if before is None:
                continue  # started by another run meanwhile
            if sandbox_id in noted and noted[sandbox_id] == later:
                continue  # exactly what the engine wrote there (or removed)
            if before != later:
                what = "created" if before is None else "removed" if later is None else "changed"
                report.tampered.append(
                    f"harness-file .harness/sandboxes/index.yaml: entry {sandbox_id} {what}"
                )
        return report
