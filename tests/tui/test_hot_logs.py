"""The reader's own look at logs being appended to (``uh_tui.watch.HotLogs``): a log the
watcher reported is read once per change, polled while it grows, and left to the watcher
once it has been quiet. Time is passed in, never measured."""

from __future__ import annotations

import os
from pathlib import Path

from uh_tui.watch import HOT_FOR_S, HOT_POLL_S, HotLogs


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
