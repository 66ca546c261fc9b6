"""Where one gate stage runs the agent's code: a ``Room``.

A room is a pristine checkout of exactly the judged tree (``checkout.py``), an output
folder for the reports the code under test writes, the environment checks receive
(``checkenv.py``), and how commands start: in a confined session (``session.py``) under
bubblewrap, or — where isolation is not available (``auto`` falling back, or
``--isolation none``) — as plain processes, and then the room says ``unconfined`` and why,
so every record that came out of it can say so too.

A check that declares it needs the network gets a second session, with the network, made
only when such a check runs. When the stage ends every process the room started is gone:
confined, the zygote killed each command's leftovers (named in ``survivors``); unconfined,
whatever still works in the room's folder is stopped and named.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from uh_core.isolation.bwrap import Resolved
from uh_core.isolation.folder import MARKER, stop_in
from uh_core.isolation.reaper import become_subreaper, children_of, reap_survivors
from uh_core.judge.checkenv import check_env
from uh_core.judge.checkout import write_tree
from uh_core.judge.session import ConfinedSession, SessionSpec
from uh_core.layout import Layout
from uh_core.proc.spawn import Launcher, spawn
from uh_core.sandbox.worktree import remove_tree

PLUGIN_DIR = Path(__file__).resolve().parent / "pytest_plugin"
INSIDE_TMP = "/tmp"
CACHE_DIR = "__pycache__"


@dataclass
class Room:
    checkout: Path
    out: Path
    env: dict[str, str]
    isolation: Resolved
    scratch: Path
    readable: list[Path]
    survivors: list[str] = field(default_factory=list)
    # Unconfined and alone in this process: our children when the room opened; at its end
    # every other child of ours is the room's leftover, whatever it cleared (None: not alone).
    spared: frozenset[int] | None = None
    _sessions: dict[bool, ConfinedSession] = field(default_factory=dict)

    @property
    def confined(self) -> bool:
        return self.isolation.mode == "bwrap"

    def launcher(self, *, network: bool = False) -> Launcher:
        """How a command of this room starts (``network``: a check that declared it)."""
        if not self.confined:
            return spawn
        session = self._sessions.get(network)
        if session is None:
            spec = SessionSpec(self.scratch, readable=self.readable, network=network)
            session = ConfinedSession(spec).start()
            self._sessions[network] = session
        return session.spawn

    def close(self) -> None:
        for session in self._sessions.values():
            session.close()
            self.survivors += [s.line() for s in session.survivors]
        self._sessions.clear()
        if not self.confined:  # alone: every new child of ours (those in the folder too)
            found = (
                stop_in(self.scratch)
                if self.spared is None
                else reap_survivors(exclude=self.spared)
            )
            self.survivors += [s.line() for s in found]

    def left_running(self, who: str) -> str | None:
        """The line a stage fails with when its commands left processes (None: nothing)."""
        if not self.survivors:
            return None
        shown = "; ".join(self.survivors[:10]) + (" …" if len(self.survivors) > 10 else "")
        return f"{who} left {len(self.survivors)} process(es) running (stopped): {shown}"

    def note(self) -> str:
        """One line for a record: how this room's commands ran."""
        if self.confined:
            return "confined: bwrap (no network, private /tmp and HOME, read-only machine)"
        return self.isolation.note or "unconfined"


def _scratch(layout: Layout, label: str) -> Path:
    name = f"{label}-{os.getpid()}-{secrets.token_hex(4)}"
    return layout.state_dir / "judge" / name


@contextlib.contextmanager
def open_room(
    layout: Layout,
    git_dir: Path,
    tree: str,
    isolation: Resolved,
    *,
    label: str,
    check_env_names: Iterable[str] = (),
    readable: Iterable[Path] = (),
    alone: bool = False,
) -> Iterator[Room]:
    """A room holding exactly ``tree`` for the ``with`` block; everything in it is stopped
    and removed at its end. ``alone``: nothing else of this process starts processes
    meanwhile (one mission at a time), so unconfined, every new child of ours is the room's
    — also a daemon that cleared its environment and left the folder."""
    scratch = _scratch(layout, label)
    checkout, out = scratch / "tree", scratch / "out"
    try:
        out.mkdir(parents=True)
        if isolation.mode == "bwrap":
            home, tmp = f"{INSIDE_TMP}/home", INSIDE_TMP
        else:
            (scratch / "home").mkdir()
            (scratch / "tmp").mkdir()
            home, tmp = str(scratch / "home"), str(scratch / "tmp")
        env = check_env(home, tmp, extra=check_env_names)
        env[MARKER] = str(scratch)  # unconfined: how its leftovers are found (folder.py)
        seen = [layout.root, PLUGIN_DIR, *readable]  # the interpreter: session.py
        room = Room(checkout, out, env, isolation, scratch, seen)
        try:
            _fill(room, git_dir, tree)
            if not room.confined and alone and become_subreaper():
                room.spared = frozenset(children_of(os.getpid()))
            yield room
        finally:
            room.close()
    finally:
        remove_tree(scratch)


def _write(git_dir: Path, tree: str, checkout: Path) -> None:
    """The tree, without the bytecode caches it may carry: a committed ``__pycache__`` would
    shadow the source it sits beside (an unchecked-hash ``.pyc`` is never compared with it),
    so the checks run the source. The diff scan names committed bytecode for review."""
    write_tree(git_dir, tree, checkout)
    for folder, dirs, _files in os.walk(checkout):
        if CACHE_DIR in dirs:
            dirs.remove(CACHE_DIR)
            remove_tree(Path(folder) / CACHE_DIR)


def _fill(room: Room, git_dir: Path, tree: str) -> None:
    """Write the checkout; confined, the room's session starts meanwhile (it binds the
    room's folder, not the tree, and starting it is mostly waiting on bubblewrap). The
    session starts in this thread: bubblewrap's ``--die-with-parent`` follows the thread
    that started it, so the checkout is the one written in a helper thread."""
    if not room.confined:
        _write(git_dir, tree, room.checkout)
        return
    failed: list[BaseException] = []

    def write() -> None:
        try:
            _write(git_dir, tree, room.checkout)
        except BaseException as exc:  # re-raised in the caller's thread
            failed.append(exc)

    writer = threading.Thread(target=write, name="uh-judge-checkout", daemon=True)
    writer.start()
    try:
        room.launcher()
    finally:
        writer.join()
    if failed:
        raise failed[0]
