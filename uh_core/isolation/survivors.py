"""What the reaper found alive, named for the record: every distinct process, the list held
to ``LISTED_MAX`` entries so that a fork bomb costs a count, not memory.

Distinct means a distinct process, ``(pid, start time)``: a fork-racing daemon passes
through many pids, and a pid may come round again as another process.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

CMDLINE_CHARS = 200
LISTED_MAX = 200


@dataclass(frozen=True)
class Survivor:
    """A process found alive after a run, and what it was running. ``stuck``: it outlasted
    SIGKILL (a process in the kernel, state ``D``) and was left, not waited on."""

    pid: int
    cmdline: str
    stuck: bool = False

    def line(self) -> str:
        return f"pid {self.pid}: {self.cmdline}" + (" (would not die; left)" if self.stuck else "")


class Survivors(list[Survivor]):
    """The survivors found, first seen first: at most ``LISTED_MAX`` listed; ``unlisted``
    counts every further distinct process, found alive and stopped just the same."""

    def __init__(self, listed: Iterable[Survivor] = (), unlisted: int = 0) -> None:
        super().__init__(listed)
        self.unlisted = unlisted
        self._where: dict[tuple[int, int], int] = {}

    @property
    def total(self) -> int:
        """Every distinct process found alive, listed or not."""
        return len(self) + self.unlisted

    def add(self, survivor: Survivor, key: tuple[int, int] | None = None) -> None:
        """Count ``survivor``; list it while fewer than ``LISTED_MAX`` are. ``key`` (pid,
        start time) lets ``mark_stuck`` find it again."""
        if len(self) >= LISTED_MAX:
            self.unlisted += 1
            return
        if key is not None:
            self._where[key] = len(self)
        self.append(survivor)

    def mark_stuck(self, key: tuple[int, int]) -> None:
        """The process ``key`` outlasted SIGKILL: say so on its entry, if it is listed."""
        index = self._where.get(key)
        if index is not None:
            survivor = self[index]
            self[index] = Survivor(survivor.pid, survivor.cmdline, stuck=True)

    def lines(self) -> list[str]:
        """One line per listed survivor (``pid N: argv``), then one counting the unlisted."""
        lines = [survivor.line() for survivor in self]
        if self.unlisted:
            lines.append(f"… and {self.unlisted} more processes, stopped but not listed")
        return lines


def cmdline(pid: int) -> str:
    """``pid``'s arguments as one line (``[comm]`` when it has none), cut to
    ``CMDLINE_CHARS``; ``?`` when it is gone."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read(4 * CMDLINE_CHARS)
    except OSError:
        raw = b""
    text = " ".join(raw.decode("utf-8", "replace").split("\0")).strip()
    if not text:
        try:
            with open(f"/proc/{pid}/comm", "rb") as handle:
                text = f"[{handle.read().decode('utf-8', 'replace').strip()}]"
        except OSError:
            text = "?"
    return text if len(text) <= CMDLINE_CHARS else text[: CMDLINE_CHARS - 1] + "…"
