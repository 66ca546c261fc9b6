"""``mission run-all`` with scripted runtimes in real worktrees."""

from __future__ import annotations

import json
import os
import signal
import time

from tests.conftest import Repo
from tests.runtime.helpers import add_manifest, live_processes_with
from uh_core.events.reader import read_events

FIX = "runtime_kind: script\nstatus: active\nconfig:\n  script: echo fixed > a.txt\n"
OTHER = "runtime_kind: script\nstatus: active\nconfig:\n  script: echo other > a.txt\n"
FAIL = "runtime_kind: script\nstatus: active\nconfig:\n  script: exit 4\n"


def _setup(repo: Repo, **runtimes: str) -> None:
    repo.write("a.txt", "a\n")
    repo.mission("m", "id: m\nacceptance_criteria:\n  - id: x\n    check_command: 'true'\n")
    for adapter_id in ("aider", "claude", "codex", "hermes", "oh-my-pi", "pi"):
        (repo.root / f".harness/adapters/{adapter_id}.yaml").unlink(missing_ok=True)
    for name, body in runtimes.items():
        add_manifest(repo, name, body)
    repo.commit("setup")


def _run_all(repo: Repo, *extra: str) -> tuple[int, dict, str]:
    result = repo.uh("mission", "run-all", "m", "--json", *extra)
    return result.code, json.loads(result.stdout), result.stderr


def test_agreement_of_two(repo: Repo) -> None:
    _setup(repo, one=FIX, two=FIX)
    code, data, _ = _run_all(repo)
    assert code == 0 and data["status"] == "agreement"
    assert data["agreement_runtimes"] == ["one", "two"]
    report = (repo.root / ".harness/missions/m/runtime-comparison.md").read_text()
    assert "**Status: AGREEMENT**" in report and "`a.txt`" in report
    stored = json.loads((repo.root / ".harness/missions/m/runtime-comparison.json").read_text())
    assert stored["status"] == "agreement"
    events, _ = read_events(repo.root / ".harness/missions/m/events.ndjson")
    compared = [e for e in events if e.event == "runtime.compared"]
    assert sorted(e.runtime for e in compared) == ["one", "two"]
    summary = [e for e in events if e.event == "runtime.comparison.summary"]
    assert len(summary) == 1 and summary[0].agreement is True


def test_console_lines(repo: Repo) -> None:
    _setup(repo, one=FIX, two=FIX, three=OTHER)
    result = repo.uh("mission", "run-all", "m")
    assert result.code == 1
    lines = result.stdout.splitlines()
    assert lines[:4] == [
        "[DIVERGENT] m",
        "runtimes: 3 succeeded, 0 not",
        "report: .harness/missions/m/runtime-comparison.md",
        "divergent: three",
    ]


def test_one_failed_and_all_failed(repo: Repo) -> None:
    _setup(repo, one=FIX, two=FIX, bad=FAIL, worse=FAIL)
    code, data, _ = _run_all(repo, "--runtimes", "one,two,bad")
    assert code == 1 and data["status"] == "failed" and data["failed_runtimes"] == ["bad"]
    code, data, _ = _run_all(repo, "--runtimes", "bad,worse")
    assert code == 1 and data["status"] == "failed" and data["groups"] == []


def test_single_success(repo: Repo) -> None:
    _setup(repo, one=FIX)
    code, data, _ = _run_all(repo)
    assert code == 1 and data["status"] == "divergent" and data["divergent_runtimes"] == ["one"]


def test_a_runtime_that_cannot_start_is_an_outcome_not_a_crash(repo: Repo) -> None:
    _setup(
        repo,
        one=FIX,
        two=FIX,
        ghost="runtime_kind: codex\nstatus: active\nconfig:\n  cli_command: no-such-codex-here\n",
    )
    code, data, _ = _run_all(repo)
    assert code == 1 and data["status"] == "failed"
    ghost = next(r for r in data["runtimes"] if r["runtime"] == "ghost")
    assert ghost["status"] == "blocked" and "not found" in ghost["error"]
    assert data["agreement_runtimes"] == ["one", "two"]


def test_a_sandbox_that_cannot_be_created_is_an_error_outcome(repo: Repo) -> None:
    _setup(repo, one=FIX, two=FIX)
    # A file where the sandboxes directory must be: every worktree creation fails.
    blocker = repo.root / ".harness/sandboxes"
    for child in blocker.iterdir():
        child.unlink()
    blocker.rmdir()
    blocker.write_text("not a directory\n")
    result = repo.uh("mission", "run-all", "m", "--json")
    assert result.code in (1, 2), result
    assert "Traceback" not in result.stderr


def test_serial_and_parallel_give_the_same_report(repo: Repo) -> None:
    _setup(repo, one=FIX, two=FIX, three=OTHER)
    _, parallel, _ = _run_all(repo)
    _, serial, _ = _run_all(repo, "--serial")
    keep = ("status", "agreement_runtimes", "divergent_runtimes", "failed_runtimes")
    assert {k: parallel[k] for k in keep} == {k: serial[k] for k in keep}
    assert [(g["diff_hash"], g["runtimes"]) for g in parallel["groups"]] == [
        (g["diff_hash"], g["runtimes"]) for g in serial["groups"]
    ]


def test_interrupted_run_all_stops_everything_and_writes_what_is_known(repo: Repo) -> None:
    marker = f"uh-runall-int-{os.getpid()}"
    slow = f'runtime_kind: script\nstatus: active\nconfig:\n  script: "sleep 60; : {marker}"\n'
    _setup(repo, fast=FIX, slow1=slow, slow2=slow)
    runner = repo.start("mission", "run-all", "m", "--json")
    deadline = time.monotonic() + 30
    events = repo.root / ".harness/missions/m/events.ndjson"

    def fast_finished() -> bool:
        # The fast runtime must have ended before the interrupt, or it is cut too (a busy machine).
        text = events.read_text() if events.exists() else ""
        return any(
            '"runtime.finished"' in line and '"runtime":"fast"' in line.replace(" ", "")
            for line in text.splitlines()
        )

    while (
        len(live_processes_with(marker)) < 2 or not fast_finished()
    ) and time.monotonic() < deadline:
        time.sleep(0.05)
    runner.send_signal(signal.SIGINT)
    out, _ = runner.communicate(timeout=60)
    assert runner.returncode == 130
    data = json.loads(out)
    assert data["interrupted"] is True
    statuses = {r["runtime"]: r["status"] for r in data["runtimes"]}
    assert statuses == {"fast": "succeeded", "slow1": "failed", "slow2": "failed"}
    assert live_processes_with(marker) == []
    assert (repo.root / ".harness/missions/m/runtime-comparison.md").exists()


def test_no_active_runtimes(repo: Repo) -> None:
    _setup(repo)
    result = repo.uh("mission", "run-all", "m")
    assert result.code == 2 and "status: active" in result.stderr
