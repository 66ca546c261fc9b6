"""Resources: each mission's file, verification record and comparison report, and each
harness run's ledger, by URI; a change to any of them is announced to listeners.

URIs (``uh://``): ``missions/{id}/mission.yaml``, ``missions/{id}/verification.yaml``,
``missions/{id}/runtime-comparison.json``, ``missions/{id}/runtime-comparison.md``,
``runs/{run_id}`` (``.harness/runs/<run_id>.json``). Ids are slugs (``uh_core.ids``) and
names a fixed list, so no URI reaches outside ``.harness/``; files are opened as regular
files only (``uh_core.safeopen``), never followed through a symlink.

Watching is the dashboard's (``uh_tui/watch.py``): watchfiles on ``.harness/`` with a
short step, and a safety poll every ``POLL_S`` whatever it reported. Each look compares
every resource file's (mtime, size, inode) with the last look's: a changed one is a
``ResourceUpdated``, a file that came or went also a ``ResourcesListChanged``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.subscriptions import ResourcesListChanged, ResourceUpdated, SubscriptionBus

from uh_core.errors import UhError
from uh_core.layout import Layout

SCHEME = "uh://"
READ_CAP = 32 << 20  # bytes of one resource
POLL_S = 2.0
STEP_MS, DEBOUNCE_MS = 5, 200

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Kind:
    name: str  # the last part of the URI
    mime: str
    description: str
    path: Callable[[Layout, str], Path]


MISSION_FILES = (
    Kind("mission.yaml", "application/yaml", "the mission file", Layout.mission_file),
    Kind(
        "verification.yaml",
        "application/yaml",
        "the latest verification record",
        Layout.verification_file,
    ),
    Kind(
        "runtime-comparison.json",
        "application/json",
        "run-all's comparison of runtimes",
        Layout.comparison_file,
    ),
    Kind(
        "runtime-comparison.md",
        "text/markdown",
        "run-all's comparison report",
        lambda layout, mid: layout.comparison_file(mid).with_suffix(".md"),
    ),
)
LEDGER = Kind(
    "ledger",
    "application/json",
    "a harness run's ledger",
    lambda layout, run: layout.ledgers_dir / f"{run}.json",
)


def mission_uri(mission_id: str, name: str) -> str:
    return f"{SCHEME}missions/{mission_id}/{name}"


def ledger_uri(run_id: str) -> str:
    return f"{SCHEME}runs/{run_id}"


def read(layout: Layout, kind: Kind, ident: str) -> str:
    """The text of one resource; a bad id, a missing file or a refused one is an error."""
    from uh_core.ids import check_id
    from uh_core.safeopen import read_regular

    try:
        path = kind.path(layout, check_id(ident, "run" if kind is LEDGER else "mission"))
        data = read_regular(path, READ_CAP + 1)
    except UhError as exc:
        raise ResourceError(exc.one_line()) from None
    except FileNotFoundError:
        raise ResourceError(f"{layout.rel(path)}: no such file") from None
    except OSError as exc:
        raise ResourceError(f"{layout.rel(path)}: {exc.strerror}") from None
    if len(data) > READ_CAP:
        raise ResourceError(f"{layout.rel(path)}: more than {READ_CAP} bytes")
    return data.decode("utf-8", "replace")


Entry = tuple[str, Kind, Path]


def entries(layout: Layout) -> list[Entry]:
    """Every resource that exists now: (uri, kind, path)."""
    found: list[Entry] = []
    for mission_id in layout.mission_ids():
        for kind in MISSION_FILES:
            path = kind.path(layout, mission_id)
            if path.is_file():
                found.append((mission_uri(mission_id, kind.name), kind, path))
    if layout.ledgers_dir.is_dir():
        for path in sorted(layout.ledgers_dir.glob("*.json")):
            found.append((ledger_uri(path.stem), LEDGER, path))
    return found


def _signatures(layout: Layout) -> dict[str, tuple[int, int, int]]:
    signs = {}
    for uri, _kind, path in entries(layout):
        try:
            info = path.stat()
        except OSError:
            continue
        signs[uri] = (info.st_mtime_ns, info.st_size, info.st_ino)
    return signs


class Watcher:
    """Announces resource changes on ``bus`` until cancelled."""

    def __init__(self, layout: Layout, bus: SubscriptionBus) -> None:
        self.layout = layout
        self.bus = bus
        self.last = _signatures(layout)

    async def look(self) -> None:
        now = await anyio.to_thread.run_sync(_signatures, self.layout)
        changed = [uri for uri, sig in now.items() if self.last.get(uri) != sig]
        listed = now.keys() != self.last.keys()
        self.last = now
        for uri in changed:
            await self.bus.publish(ResourceUpdated(uri=uri))
        if listed:
            await self.bus.publish(ResourcesListChanged())

    async def run(self) -> None:
        """Until cancelled. The cancel also sets the watch's stop event, which its thread
        reads every step: else the cancel waited for the thread's safety-poll timeout (up
        to ``POLL_S``), and so did the server's exit after every client's disconnect."""
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch, stop)
            try:
                await anyio.sleep_forever()
            finally:
                stop.set()

    async def _watch(self, stop: anyio.Event) -> None:
        import watchfiles

        try:
            async for _changes in watchfiles.awatch(
                self.layout.harness,
                watch_filter=None,
                debounce=DEBOUNCE_MS,
                step=STEP_MS,
                rust_timeout=int(POLL_S * 1000),
                yield_on_timeout=True,  # the safety poll
                stop_event=stop,
            ):
                await self.look()
        except (OSError, RuntimeError) as exc:  # no watcher here: poll instead
            log.warning(
                "watching %s failed (%s); polling every %s s", self.layout.harness, exc, POLL_S
            )
            while True:
                await anyio.sleep(POLL_S)
                await self.look()
