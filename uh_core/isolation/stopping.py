"""Stopping a tree of our processes until none is left, however fast it re-forks.

A round cap loses to a daemon that ignores SIGTERM and re-forks into a new session faster
than the rounds go by: each fork hands the next round a new orphan, and the last one wins.
So there is no cap; instead the tree is made to hold still before it is killed:

1. **Polite.** Every process of the tree gets SIGTERM (a direct child's process group
   too, where the caller allows), once, and ``grace_s`` to end. Honest programs end here.
2. **Freeze.** Whatever is left gets SIGSTOP as soon as it is seen — a stopped process
   cannot fork — and the tree is walked again and again, stopping newcomers, until
   ``QUIET_PASSES`` walks in a row and then a full ``/proc`` scan find nothing new, no
   zombie of ours to reap, and nothing still on its way to stopping. The fast walks read
   the kernel's child lists, so a child that lives a millisecond is still caught.
3. **Kill.** Every frozen process gets SIGKILL (a stopped process dies of it without
   SIGCONT) and is reaped. One that outlasts ``kill_wait_s`` (in the kernel, state ``D``)
   is reported as stuck and left: never waited on again, never a reason to go on.
4. Steps 2–3 repeat until a freeze finds nothing. Each round kills at least everything it
   froze, and only a running process can add one, so even a fork bomb ends.

The tree: the children of this process that ``select`` accepts, and all their descendants
(orphans come back to us as children when we are a subreaper). A zombie child is reaped
when ``select`` takes it, or when it was seen alive here; any other is left to whoever
waits for it (another mission's command, say). Every signal goes through a pidfd
(``proctree.pinned``): a pid reused meanwhile is never hit.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable

from uh_core.isolation.proctree import (
    Key,
    Proc,
    child_pids,
    dying,
    namespace_init,
    pinned,
    read,
    send,
    signal_key,
    table,
)
from uh_core.isolation.survivors import Survivor, Survivors, cmdline

QUIET_PASSES = 20
STOP_WAIT_S = 1.0  # per process: how long one seen running is awaited in a stopped state

Select = Callable[[Proc], bool]
GroupOf = Callable[[Proc], int | None]
Visit = Callable[[Proc, int | None], None]


def _reap(pid: int) -> bool:
    """Reap ``pid`` if it is a child of ours that has ended."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == pid


class Stopper:
    """One stop of one tree (see the module doc); ``run`` returns what was found alive."""

    def __init__(self, select: Select, group_of: GroupOf, kill_wait_s: float) -> None:
        self.me = os.getpid()
        self.select = select
        self.group_of = group_of
        self.kill_wait_s = kill_wait_s
        self.found = Survivors()
        self.seen: set[Key] = set()
        self.stuck: set[Key] = set()
        self.doomed: set[Key] = set()
        self.fast = child_pids(self.me) is not None

    def run(self, grace_s: float) -> Survivors:
        self._polite(grace_s)
        while frozen := self._freeze():
            self._kill(frozen)
        return self.found

    def _note(self, proc: Proc, doomed: bool) -> bool:
        """Record ``proc`` the first time it is seen: a survivor unless it is already being
        torn down (``doomed``: its PID namespace's init is). Whether what it started is
        doomed too: true below a dying namespace init, whose namespace the kernel kills."""
        if proc.key in self.seen:
            return proc.key in self.doomed
        self.seen.add(proc.key)
        argv = cmdline(proc.pid)  # before ``dying``: an exiting process's arguments go first
        ending = dying(proc.pid)
        if not (ending or doomed):
            self.found.add(Survivor(proc.pid, argv), proc.key)
        if doomed or (ending and namespace_init(proc.pid)):
            self.doomed.add(proc.key)
            return True
        return False

    def _walk(self, visit: Visit, full: bool, note_first: bool) -> tuple[int, int]:
        """One pass over the tree: ``visit`` each live process (stuck ones excepted) and
        note it (before the visit, or after: a SIGSTOP goes first), reap the zombies that
        are ours to reap. Returns (live processes seen, zombies reaped)."""
        kids = table() if full or not self.fast else None

        def children(pid: int) -> list[int]:
            if kids is not None:
                return [proc.pid for proc in kids.get(pid, [])]
            return child_pids(pid) or []

        live = reaped = 0
        stack = [(pid, self.me, False) for pid in children(self.me)]
        done: set[int] = {self.me}
        while stack:
            pid, parent, doomed = stack.pop()
            if pid in done:
                continue
            done.add(pid)
            first = read(pid)  # one cheap read first: most of a racer's trail is zombies
            if first is None or first.ppid != parent:
                continue  # gone, reparented, or the pid is another process's now
            ours = parent != self.me or first.key in self.seen or self.select(first)
            if first.ended:
                reaped += ours and parent == self.me and _reap(pid)
                continue
            if not ours:
                continue
            with pinned(pid) as held:
                if held is None or held[0].key != first.key or held[0].ended:
                    continue
                proc, fd = held
                if note_first:
                    doomed = self._note(proc, doomed)
                if proc.key not in self.stuck:
                    visit(proc, fd)
                    live += 1
                if not note_first:
                    doomed = self._note(proc, doomed)
            stack += [(child, pid, doomed) for child in children(pid)]
        return live, reaped

    def _polite(self, grace_s: float) -> None:
        """SIGTERM once to each process of the tree (and a child's group), noted first: a
        group's SIGTERM may end members before the walk reaches them."""
        deadline = time.monotonic() + grace_s
        termed: set[Key] = set()
        groups: set[int] = set()
        batch: list[Proc] = []
        while True:
            batch.clear()
            live, reaped = self._walk(lambda proc, _fd: batch.append(proc), False, True)
            for proc in batch:
                if proc.key in termed:
                    continue
                termed.add(proc.key)
                group = self.group_of(proc) if proc.ppid == self.me else None
                if group is not None and group not in groups:
                    groups.add(group)
                    with contextlib.suppress(OSError):
                        os.killpg(group, signal.SIGTERM)
                signal_key(proc.key, signal.SIGTERM)
            if not (live or reaped) or time.monotonic() >= deadline:
                return
            time.sleep(0.01)

    def _freeze(self) -> dict[Key, Proc]:
        """SIGSTOP the whole tree and make sure it holds still; the processes stopped."""
        frozen: dict[Key, Proc] = {}
        asked: dict[Key, float] = {}
        waking: list[Proc] = []

        def stop(proc: Proc, fd: int | None) -> None:
            if not proc.stopped:
                send(proc, fd, signal.SIGSTOP)  # first, before anything slower
                asked.setdefault(proc.key, time.monotonic())
                if proc.waking:
                    waking.append(proc)
            frozen.setdefault(proc.key, proc)

        quiet = 0
        while True:
            full = quiet >= QUIET_PASSES
            before = len(frozen)
            waking.clear()
            _live, reaped = self._walk(stop, full, note_first=False)
            now = time.monotonic()
            pending = [p for p in waking if now - asked[p.key] < STOP_WAIT_S]
            if reaped or len(frozen) > before:
                quiet = 0
            elif pending:
                quiet = 0
                time.sleep(0.001)  # a SIGSTOP just sent: let it land
            elif full:
                return frozen
            else:
                quiet += 1

    def _kill(self, frozen: dict[Key, Proc]) -> None:
        for key in frozen:
            signal_key(key, signal.SIGKILL)
        deadline = time.monotonic() + self.kill_wait_s
        waiting = set(frozen)
        while True:
            for key in list(waiting):
                proc = read(key[0])
                if proc is None or proc.start != key[1]:
                    waiting.discard(key)
                elif proc.ended:
                    # Ours: reaped now. Another's (its parent dies too): it comes to us
                    # as an orphan and the next walk reaps it.
                    if proc.ppid == self.me:
                        _reap(key[0])
                    waiting.discard(key)
            if not waiting or time.monotonic() >= deadline:
                break
            time.sleep(0.01)
        for key in waiting:  # outlasted SIGKILL: in the kernel; reported, left
            self.stuck.add(key)
            self.found.mark_stuck(key)


def stop_tree(
    select: Select, group_of: GroupOf, *, grace_s: float, kill_wait_s: float
) -> Survivors:
    """Stop and reap the tree ``select`` picks among our children (see the module doc);
    every distinct process found alive, first seen first (``Survivors``)."""
    return Stopper(select, group_of, kill_wait_s).run(grace_s)
