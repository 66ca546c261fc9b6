"""The fold: events in, mission state out — fed by real ``uh-core verify`` runs and logs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from uh_core.events.observe import MissionObserver, MissionState
from uh_core.events.writer import EventLog, append_line
from uh_core.models.events import (
    AcceptanceChecked,
    AcceptanceStarted,
    CheckChecked,
    RuntimeProgress,
    VerificationFinished,
    VerificationStarted,
)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "uh tests",
    "GIT_AUTHOR_EMAIL": "tests@uh.invalid",
    "GIT_COMMITTER_NAME": "uh tests",
    "GIT_COMMITTER_EMAIL": "tests@uh.invalid",
}


def _uh(*args: str) -> list[str]:
    """The installed ``uh-core`` console script, the one a user runs."""
    script = Path(sys.executable).with_name("uh-core")
    return [str(script if script.exists() else shutil.which("uh-core") or "uh-core"), *args]


def _project(tmp_path: Path, mission_id: str, mission_yaml: str) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True, env=env)
    (root / "README.md").write_text("# test\n", encoding="utf-8")
    subprocess.run(_uh("init", "--root", str(root)), check=True, capture_output=True)
    mission = root / ".harness" / "missions" / mission_id / "mission.yaml"
    mission.parent.mkdir(parents=True, exist_ok=True)
    mission.write_text(textwrap.dedent(mission_yaml), encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=root, check=True, env=env)
    return root


def _events_path(root: Path, mission_id: str) -> Path:
    return root / ".harness" / "missions" / mission_id / "events.ndjson"


MIXED = """\
    schema_version: uh.mission.v0
    id: fold-me
    title: a bit of everything
    verification:
      required_checks:
        - name: lint
          command: "true"
    acceptance_criteria:
      - id: ac-pass
        description: passes
        check_command: "true"
      - id: ac-fail
        description: fails with 3
        check_command: "exit 3"
      - id: ac-warn
        description: a warning
        severity: warn
        check_command: "false"
      - id: ac-manual
        description: no command
"""


def test_fold_of_a_real_verify_run(tmp_path: Path) -> None:
    root = _project(tmp_path, "fold-me", MIXED)
    proc = subprocess.run(
        _uh("verify", "fold-me", "--root", str(root)), capture_output=True, text=True
    )
    assert proc.returncode == 1, proc.stderr

    observer = MissionObserver("fold-me", _events_path(root, "fold-me"))
    events = observer.poll()
    state = observer.state
    assert observer.malformed == 0
    assert events[0].event == "verification.started"
    assert events[-1].event == "verification.finished"
    first_run = state.verify_run_id
    assert first_run is not None and first_run.startswith("verify-")
    assert all(e.run_id == state.verify_run_id for e in events)
    assert state.verify_status == "failed" and not state.running
    assert state.total_acceptance == 4
    assert state.checks == {"lint": "passed"}
    summary = {
        ac: (c.status, c.severity, c.exit_code, c.timed_out) for ac, c in state.criteria.items()
    }
    assert summary == {
        "ac-pass": ("passed", "block", 0, False),
        "ac-fail": ("failed", "block", 3, False),
        "ac-warn": ("failed", "warn", 1, False),
        "ac-manual": ("blocked", "block", None, False),
    }
    assert list(state.criteria) == ["ac-pass", "ac-fail", "ac-warn", "ac-manual"]
    assert state.events == len(events) and state.last_event == "verification.finished"

    # A second run: the fold follows it and forgets the first one's criteria.
    (root / ".harness/missions/fold-me/mission.yaml").write_text(
        textwrap.dedent(
            """\
            schema_version: uh.mission.v0
            id: fold-me
            acceptance_criteria:
              - id: ac-only
                check_command: "true"
            """
        ),
        encoding="utf-8",
    )
    proc = subprocess.run(_uh("verify", "fold-me", "--root", str(root)), capture_output=True)
    assert proc.returncode == 0, proc.stderr
    observer.poll()
    assert observer.state.verify_status == "passed"
    assert list(observer.state.criteria) == ["ac-only"]
    assert observer.state.checks == {}
    assert observer.state.verify_run_id != first_run


SLOW = """\
    schema_version: uh.mission.v0
    id: live
    acceptance_criteria:
      - id: ac-1
        check_command: "sleep 0.4"
      - id: ac-2
        check_command: "sleep 0.4"
      - id: ac-3
        check_command: "sleep 0.4"
"""


def test_fold_sees_progress_live_while_verify_runs(tmp_path: Path) -> None:
    root = _project(tmp_path, "live", SLOW)
    observer = MissionObserver("live", _events_path(root, "live"))
    proc = subprocess.Popen(
        _uh("verify", "live", "--root", str(root)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    snapshots: set[tuple[str | None, tuple[tuple[str, str], ...]]] = set()
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        observer.poll()
        state = observer.state
        snapshots.add(
            (state.verify_status, tuple((k, c.status) for k, c in state.criteria.items()))
        )
        time.sleep(0.02)
    assert proc.wait() == 0, proc.stderr.read() if proc.stderr else ""
    observer.poll()
    assert observer.state.verify_status == "passed"
    # While it ran, the fold showed the criteria one at a time.
    assert ("running", (("ac-1", "running"),)) in snapshots
    assert ("running", (("ac-1", "passed"), ("ac-2", "running"))) in snapshots
    assert ("running", (("ac-1", "passed"), ("ac-2", "passed"), ("ac-3", "running"))) in snapshots
    assert observer.malformed == 0


def _run(log: EventLog, statuses: dict[str, str], *, finish: str | None) -> None:
    log.emit(VerificationStarted(total_checks=1, total_acceptance=len(statuses)))
    log.emit(CheckChecked(name="lint", status="passed", exit_code=0))
    for index, (ac, status) in enumerate(statuses.items()):
        log.emit(AcceptanceStarted(ac_id=ac, index=index, total=len(statuses)))
        log.emit(
            AcceptanceChecked(ac_id=ac, status=status, exit_code=0 if status == "passed" else 1)
        )
    if finish:
        log.emit(VerificationFinished(status=finish))


def test_new_verification_started_resets_the_criteria(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    _run(
        EventLog(path, mission_id="m", run_id="run-a"),
        {"a1": "passed", "a2": "failed"},
        finish="failed",
    )
    observer = MissionObserver("m", path)
    observer.poll()
    assert observer.state.verify_status == "failed"
    assert {k: c.status for k, c in observer.state.criteria.items()} == {
        "a1": "passed",
        "a2": "failed",
    }

    log_b = EventLog(path, mission_id="m", run_id="run-b")
    log_b.emit(VerificationStarted(total_checks=0, total_acceptance=1))
    observer.poll()
    state = observer.state
    assert (state.verify_run_id, state.verify_status, state.total_acceptance) == (
        "run-b",
        "running",
        1,
    )
    assert state.criteria == {} and state.checks == {} and state.running
    log_b.emit(AcceptanceStarted(ac_id="b1", index=0, total=1))
    observer.poll()
    assert {k: c.status for k, c in observer.state.criteria.items()} == {"b1": "running"}


def test_stragglers_from_an_older_run_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    log_a = EventLog(path, mission_id="m", run_id="run-a")
    log_b = EventLog(path, mission_id="m", run_id="run-b")
    log_a.emit(VerificationStarted(total_acceptance=2))
    log_a.emit(AcceptanceStarted(ac_id="x", index=0, total=2))
    log_b.emit(VerificationStarted(total_acceptance=1))  # a newer run takes over
    # The old run's late events arrive after it:
    log_a.emit(AcceptanceChecked(ac_id="x", status="failed", exit_code=1))
    log_a.emit(CheckChecked(name="old-check", status="failed"))
    log_a.emit(AcceptanceStarted(ac_id="y", index=1, total=2))
    log_a.emit(VerificationFinished(status="failed"))
    log_b.emit(AcceptanceStarted(ac_id="z", index=0, total=1))
    log_b.emit(AcceptanceChecked(ac_id="z", status="passed", exit_code=0))

    observer = MissionObserver("m", path)
    observer.poll()
    state = observer.state
    assert state.verify_run_id == "run-b"
    assert state.verify_status == "running"  # run-a's finish did not end run-b
    assert state.checks == {}
    assert {k: (c.status, c.exit_code) for k, c in state.criteria.items()} == {"z": ("passed", 0)}
    assert state.events == 9  # every event was seen, only the stragglers were not applied

    log_b.emit(VerificationFinished(status="passed"))
    observer.poll()
    assert observer.state.verify_status == "passed"


def test_unknown_foreign_and_malformed_lines_only_bump_counters(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    log = EventLog(path, mission_id="m", run_id="run-a")
    _run(log, {"a1": "passed"}, finish=None)
    append_line(path, b'{"type": "mission.started", "ts": "2025-01-01T00:00:00Z"}\n')
    # a known name with a foreign payload (read as UnknownEvent): must not touch the state
    append_line(path, b'{"event": "acceptance.checked", "ac_id": "a1", "status": ["?"]}\n')
    append_line(path, b"{broken\n")
    log.emit(RuntimeProgress(runtime="codex", message="hi"))
    observer = MissionObserver("m", path)
    observer.poll()
    state = observer.state
    assert state.criteria["a1"].status == "passed"
    assert state.verify_status == "running"
    assert state.last_event == "runtime.progress"
    assert state.events == 7
    assert observer.malformed == 1


def test_observer_folds_again_when_the_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "events.ndjson"
    _run(EventLog(path, mission_id="m", run_id="run-a"), {"a1": "failed"}, finish="failed")
    observer = MissionObserver("m", path)
    observer.poll()
    assert observer.state.events == 5

    new = tmp_path / "new.ndjson"
    _run(EventLog(new, mission_id="m", run_id="run-b"), {"b1": "passed"}, finish="passed")
    os.replace(new, path)
    observer.poll()
    observer.poll()
    state = observer.state
    assert state.events == 5  # folded from scratch, nothing counted twice
    assert (state.verify_run_id, state.verify_status) == ("run-b", "passed")
    assert list(state.criteria) == ["b1"]


@pytest.mark.parametrize("status", ["passed", "failed", "blocked"])
def test_finished_status_is_the_verify_status(status: str) -> None:
    state = MissionState("m")
    state.apply(VerificationStarted(run_id="r", timestamp="t1"))
    state.apply(VerificationFinished(run_id="r", status=status, timestamp="t2"))
    assert state.verify_status == status and state.last_timestamp == "t2" and not state.running
