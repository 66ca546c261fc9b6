"""A thousand missions and two thousand runs: the derived index gives the rows the files give.

Two workspaces, each built once for this module from the demo after one harness run
(tests/workspace/grown.py): the team's size (1,004 missions, 2,001 ledgers) and a small one
(34 missions, 61 ledgers) for the cases that need a reader without the index as the oracle.
Every test has a state folder of its own (tests/conftest.py), so its first reader finds no
index: it derives every row from the files and writes them; the next reader takes them.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.events.test_reader_fast import same
from tests.workspace.grown import grow
from uh_core.layout import Layout
from uh_core.workspace import twocores
from uh_core.workspace.index import open_index
from uh_core.workspace.mission_rows import inputs
from uh_core.workspace.state import Snapshot
from uh_core.workspace.store import Store


def _demo_after_a_harness_run(folder: Path) -> Path:
    """``uh-core demo`` (every mission verified, a run-all) and one ``harness run``: the
    baseline workspace of benchmarks/scale_open.py."""
    root = folder / "demo"
    env = {**os.environ, "UH_STATE_DIR": str(folder / "state")}
    for args, cwd in ((["demo", str(root)], folder), (["harness", "run"], root)):
        subprocess.run(
            [sys.executable, "-m", "uh_core", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            check=False,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )
    assert sorted((root / ".harness/runs").glob("harness-*.json")), (
        "the harness run wrote no ledger"
    )
    return root


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once for the whole run: xdist's workers share it (under a lock)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return _demo_after_a_harness_run(tmp_path_factory.mktemp("scale"))
    folder = tmp_path_factory.getbasetemp().parent / f"uh-scale-{run}"
    folder.mkdir(exist_ok=True)
    with open(folder / "lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "built").is_file():
            _demo_after_a_harness_run(folder)
            (folder / "built").write_text("ok\n")
    return folder / "demo"


@pytest.fixture(scope="module")
def team(demo_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("team") / "demo"
    shutil.copytree(demo_run, root, symlinks=True)
    assert grow(root, missions=1000, runs=2000) == {"missions": 1004, "runs": 2001}
    return root


@pytest.fixture
def small(demo_run: Path, tmp_path: Path) -> Path:
    root = tmp_path / "demo"
    shutil.copytree(demo_run, root, symlinks=True)
    grow(root, missions=30, runs=60)
    return root


def test_every_event_line_of_the_demo_reads_as_the_general_path_reads_it(demo_run: Path) -> None:
    """``parse_event``'s fast path over every line the demo, its run-all and a harness run
    wrote (tests/events/test_reader_fast.py has the edges)."""
    lines = [
        line
        for log in sorted((demo_run / ".harness").rglob("*.ndjson"))
        for line in log.read_bytes().splitlines()
    ]
    assert sum(line.startswith(b'{"event":"') for line in lines) > 100
    for line in lines:
        same(line)


def _settle(root: Path, index: bool = True) -> tuple[Snapshot, Store]:
    store = Store(root, index=index)
    return store.settle(), store


def _delete_index(root: Path, suffixes: tuple[str, ...] = ("", "-wal", "-shm")) -> Path:
    """The index's files removed (by default the database and its journal files); its path."""
    path = Layout(root).state_dir / "index.sqlite"
    for suffix in suffixes:
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


def _deferred(store: Store) -> int:
    return sum(1 for feed in store.feeds.values() if feed.deferred)


def test_a_thousand_missions_read_from_the_index_as_from_the_files(team: Path) -> None:
    cold, first = _settle(team)  # no index yet: every row from the files, then stored
    assert len(cold.missions) == 1004 and len(cold.harness.ledgers) == 2001
    if twocores.can_fork():  # derived on two cores into the index, then read from it
        assert first.ledger_rows.derived == 0 and _deferred(first) == 1004
    else:
        assert first.ledger_rows.derived == 2001 and _deferred(first) == 0
    warm, second = _settle(team)
    assert warm == cold
    assert second.ledger_rows.derived == 0  # no ledger read
    assert _deferred(second) == 1004  # no log read: each mission's row as stored


def test_the_index_gives_what_no_index_gives_and_follows_changes(small: Path) -> None:
    oracle, _ = _settle(small, index=False)
    assert _settle(small)[0] == oracle  # cold: derived and stored
    assert _settle(small)[0] == oracle  # warm: from the index
    # a record changes under the index: the verdict of one mission, a run's outcome
    verification = small / ".harness/missions/mean-0003/verification.yaml"
    text = verification.read_text(encoding="utf-8")
    verification.write_text(text.replace("status: failed", "status: passed", 1), "utf-8")
    ledger = sorted((small / ".harness/runs").glob("harness-*.json"))[0]
    data = json.loads(ledger.read_text(encoding="utf-8"))
    data["requirements"][0]["outcome"] = "skipped"
    ledger.write_text(json.dumps(data), encoding="utf-8")
    changed, store = _settle(small)
    assert changed == _settle(small, index=False)[0] != oracle
    assert store.ledger_rows.derived == 1 and _deferred(store) == 33


@pytest.mark.skipif(not twocores.can_fork(), reason="needs fork and two cores")
def test_a_first_read_on_two_cores_gives_what_one_gives(
    small: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``status`` and ``mission list`` on an index that knows nothing: a helper derives the
    ledgers and its share of rows into the index; the snapshot and the rows are exactly
    those of one process reading the files."""
    from uh_core.workspace.list_rows import mission_list

    oracle, _ = _settle(small, index=False)
    rows = mission_list(Layout(small))  # a listing on one core (34 missions: too few)
    _delete_index(small)
    monkeypatch.setattr(twocores, "MIN_KEYS", 1)
    shared, store = _settle(small)
    assert shared == oracle
    assert store.ledger_rows.derived == 0  # the helper read every ledger
    assert _deferred(store) == 34  # and every row came from the index, once
    assert mission_list(Layout(small)) == rows
    _delete_index(small)
    assert mission_list(Layout(small)) == rows  # a first listing on two cores


def test_a_deleted_or_corrupt_index_is_rebuilt_from_the_files(small: Path) -> None:
    oracle, _ = _settle(small, index=False)
    _settle(small)
    assert (Layout(small).state_dir / "index.sqlite").is_file()
    path = _delete_index(small)
    assert _settle(small)[0] == oracle  # deleted: rebuilt
    path.write_bytes(b"this is not a database" * 100)
    _delete_index(small, ("-wal", "-shm"))
    snapshot, store = _settle(small)
    assert snapshot == oracle
    assert store.index is not None and (store.index.rebuilt or "").startswith("unusable")
    assert _settle(small)[1].ledger_rows.derived == 0  # and used again


def test_a_row_the_index_holds_wrongly_is_not_trusted(small: Path) -> None:
    """A row whose value does not validate (another uh wrote it, or someone did) is
    derived again; a row under a stale signature never shows."""
    oracle, _ = _settle(small, index=False)
    _settle(small)
    index = open_index(Layout(small))
    assert index._db is not None
    index._db.execute("UPDATE derived SET value='{\"mission_id\": 42}' WHERE key='divide-0002'")
    index._db.execute("UPDATE derived SET sig='0:0:0' WHERE key='mean-0007'")
    index.close()
    snapshot, store = _settle(small)
    assert snapshot == oracle and _deferred(store) == 32


def test_a_running_mission_is_not_stored_and_new_events_reach_a_row_from_the_index(
    small: Path,
) -> None:
    _settle(small)
    store = Store(small)
    store.full()
    log = small / ".harness/missions/add-subtract-0000/events.ndjson"
    assert store.feeds["add-subtract-0000"].deferred
    owner = {"pid": os.getpid(), "start_time": _start_time(), "host": os.uname().nodename}
    started = {
        "event": "verification.started",
        "timestamp": "2099-01-01T00:00:00.000Z",
        "mission_id": "add-subtract-0000",
        "run_id": "verify-20990101T000000Z-aaaaaa",
        "owner": owner,
        "total_checks": 0,
        "total_acceptance": 3,
    }
    with log.open("a", encoding="utf-8") as out:
        out.write(json.dumps(started) + "\n")
    update = store.changed([log])
    assert update is not None
    view = update.snapshot.mission("add-subtract-0000")
    assert view is not None and view.live == "verify 0/3" and view.verifying
    assert any(line.event == "verification.started" for line in update.events)
    assert _settle(small)[0].mission("add-subtract-0000") == view  # running: never stored


def test_mission_list_is_the_same_with_and_without_the_index(small: Path) -> None:
    def listed() -> str:
        result = Repo(small).uh("mission", "list", "--json")
        assert result.code == 0, result.stderr
        return result.stdout

    cold = listed()
    assert listed() == cold  # from the index
    verification = small / ".harness/missions/mean-0003/verification.yaml"
    text = verification.read_text(encoding="utf-8")
    verification.write_text(text.replace("status: failed", "status: passed", 1), "utf-8")
    rows = {m["id"]: m for m in json.loads(listed())["missions"]}
    assert rows["mean-0003"]["last_verdict"] == "passed"
    assert json.loads(cold)["missions"] != json.loads(listed())["missions"]


def test_one_listing_signs_as_every_stat_does(small: Path) -> None:
    from uh_core.workspace.index import signature
    from uh_core.workspace.mission_rows import inputs_signature

    layout = Layout(small)
    for mission_id in ("divide", "mean-0003", "changelog-0001"):
        assert inputs_signature(layout, mission_id) == signature(inputs(layout, mission_id))
    assert inputs_signature(layout, "gone") == " ".join(["-"] * 9)


def test_inputs_name_the_files_the_layout_names() -> None:
    layout = Layout(Path("/r"))
    named = {Path(p) for p in inputs(layout, "m")}
    assert {
        layout.mission_file("m"),
        layout.verification_file("m"),
        layout.comparison_file("m"),
        layout.promotion_file("m"),
        layout.mission_events("m"),
    } <= named
    assert inputs(layout, "m")[-1] == str(layout.mission_events("m"))  # the store reads it last


def _start_time() -> int | None:
    from uh_core.procid import start_time

    return start_time(os.getpid())


def test_harness_report_from_the_index_follows_its_ledgers_and_marks(small: Path) -> None:
    def report() -> dict[str, object]:
        result = Repo(small).uh("harness", "report", "--json")
        assert result.code == 0, result.stderr
        data: dict[str, object] = json.loads(result.stdout)
        return data

    cold = report()
    assert report() == cold  # stored: no ledger read
    mark = Repo(small).uh("harness", "report", "--mark-false-failure", "mean", "--reason", "flaky")
    assert mark.code == 0, mark.stderr
    marked = report()
    assert marked["false_failures"] != cold["false_failures"]  # the marks file changed
    ledger = sorted((small / ".harness/runs").glob("harness-*.json"))[-1]
    ledger.unlink()
    assert report()["pass_rate"] != marked["pass_rate"]  # a run gone


def test_an_index_that_cannot_be_written_is_gone_without(
    small: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    oracle, _ = _settle(small, index=False)
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder\n")
    monkeypatch.setenv("UH_STATE_DIR", str(blocked))  # its folder cannot be made
    snapshot, store = _settle(small)
    assert snapshot == oracle
    assert store.index is not None and not store.index.usable


def test_the_dashboard_shows_first_what_a_window_shows_and_the_rest_after(
    small: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No index (a first start): a window's worth of rows is derived before the first
    frame, the others read ``reading`` until ``more()`` reaches them; ledgers likewise,
    newest first. What it ends with is what a script's settle() gives."""
    import uh_core.workspace.store as store_module

    oracle, _ = _settle(small, index=False)
    monkeypatch.setattr(store_module, "FIRST_ROWS", 5)
    monkeypatch.setattr(store_module, "FIRST_S", 0.0)
    monkeypatch.setattr(store_module, "STEP_S", 0.0)  # one row (and one ledger) per step
    store = Store(small, index=False)
    first = store.full()
    assert first is not None
    reading = [m for m in first.snapshot.missions if m.catching_up == 0.0 and not m.title]
    assert len(reading) == 34 - 5
    assert store.ledger_rows.pending > 0 and store.busy
    assert first.events  # the newest lines of every log, read or not
    steps = 0
    while store.busy:
        store.more()
        steps += 1
    assert steps >= 29
    assert store.snapshot == oracle
