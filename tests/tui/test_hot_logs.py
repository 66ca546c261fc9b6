"""The reader's own look at logs being appended to (``uh_tui.watch.HotLogs``): a log the
watcher reported is read once per change, polled while it grows, and left to the watcher
once it has been quiet (time is passed in, never measured); and the reader holds what it
is told while the UI has not taken its last update."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from uh_core.events.writer import EventLog
from uh_core.init import init_project
from uh_core.layout import Layout
from uh_core.models.events import RuntimeProgress
from uh_core.workspace.state import Update
from uh_core.workspace.store import Store
from uh_tui.watch import HOT_FOR_S, HOT_POLL_S, HotLogs, LiveReader, Mailbox


def _log(root: Path) -> Path:
    log = root / "missions" / "m" / "events.ndjson"
    log.parent.mkdir(parents=True)
    log.write_text('{"n": 0}\n')
    return log


def _append(log: Path, n: int) -> None:
    with log.open("a") as handle:
        handle.write(f'{{"n": {n}}}\n')


def test_a_reported_log_is_read_once_per_change_and_polled_while_it_grows(
    tmp_path: Path,
) -> None:
    log = _log(tmp_path)
    doc = log.with_name("mission.yaml")
    hot = HotLogs()
    assert hot.wait(0.0) is None  # nothing hot: the reader waits for the watcher
    assert hot.fresh({log, doc}, 0.0) == {log, doc}
    # the watcher's next batch names the log again, but it was read to this very stat
    assert hot.fresh({log}, 0.001) == set()
    assert hot.fresh({doc}, 0.001) == {doc}  # other files: always what was reported
    assert hot.wait(0.001) is not None
    _append(log, 1)
    # no batch from the watcher: the poll finds the append itself
    assert hot.fresh(set(), 0.001 + HOT_POLL_S) == {log}
    assert hot.fresh(set(), 0.001 + 2 * HOT_POLL_S) == set()


def test_a_quiet_log_cools_down(tmp_path: Path) -> None:
    log = _log(tmp_path)
    hot = HotLogs()
    hot.fresh({log}, 0.0)
    assert hot.fresh(set(), HOT_FOR_S + 1) == set()
    assert hot.wait(HOT_FOR_S + 1) is None
    _append(log, 1)
    assert hot.fresh({log}, HOT_FOR_S + 2) == {log}  # reported again: hot again
    assert hot.wait(HOT_FOR_S + 2) is not None


def test_a_replaced_or_missing_log_is_read(tmp_path: Path) -> None:
    log = _log(tmp_path)
    hot = HotLogs()
    hot.fresh({log}, 0.0)
    fresh = log.with_name("events.ndjson.new")
    fresh.write_text(log.read_text())  # the same size, another inode
    os.replace(fresh, log)
    assert hot.fresh(set(), HOT_POLL_S) == {log}
    log.unlink()
    assert hot.fresh({log}, 2 * HOT_POLL_S) == {log}  # the store says what a gone log means


def _wait(check: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + 10
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def test_the_reader_reads_nothing_while_the_ui_has_not_taken_the_last_update(
    tmp_path: Path,
) -> None:
    """Handing updates to a Mailbox, the reader holds what the watcher reports while the
    last update waits to be taken (a read then would only be merged into it), and reads
    it all once the UI takes it."""
    layout = Layout(tmp_path)
    init_project(layout)
    layout.mission_file("m").parent.mkdir(parents=True)
    layout.mission_file("m").write_text("id: m\ntitle: held\n")
    store = Store(tmp_path)
    reads: list[int] = []
    changed = store.changed

    def counted(paths: set[Path]) -> Update | None:
        reads.append(len(paths))
        return changed(paths)

    store.changed = counted  # type: ignore[method-assign]
    mailbox = Mailbox(lambda: None)
    reader = LiveReader(store, mailbox, lambda _warning: None, watch=False, poll_s=60)
    stop = threading.Event()
    thread = threading.Thread(target=reader.run, args=(stop,), daemon=True)
    thread.start()
    try:
        _wait(lambda: mailbox.holding, "the first update")
        log = EventLog(layout.mission_events("m"), mission_id="m", run_id="sbx-m-1")
        for n in range(3):
            log.emit(RuntimeProgress(runtime="a", message=f"n{n}"))
        reader.inbox.put({layout.mission_events("m")})
        time.sleep(0.2)  # the reader has had every chance to read it
        assert reads == []
        first = mailbox.take()
        assert first is not None and not [line for line in first.events if line.source == "m"]
        _wait(lambda: mailbox.holding, "the held appends")
        held = mailbox.take()
        assert held is not None
        assert [line.text.split("message=")[-1] for line in held.events] == ["n0", "n1", "n2"]
        assert len(reads) == 1
    finally:
        stop.set()
        thread.join(5)
