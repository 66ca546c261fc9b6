"""``mission dry-run | run | cancel`` with script and command runtimes in real worktrees."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import yaml

from tests.conftest import Repo, git
from tests.runtime.helpers import add_manifest, live_processes_with
from uh_core.events.reader import read_events

FIXER = """runtime_kind: script
status: active
config:
  script: |
    echo "working on $MISSION_ID in $UH_SANDBOX"
    echo "fixed" >> a.txt
    printf '```uh-runtime-final-message\\nappended to a.txt\\n```\\n'
"""
MISSION = "id: m\ntitle: fix a\nacceptance_criteria:\n  - id: fixed\n    check_command: grep -q fixed a.txt\n"


def _setup(repo: Repo) -> None:
    repo.write("a.txt", "hello\n")
    repo.mission("m", MISSION)
    add_manifest(repo, "fixer", FIXER)
    repo.commit("setup")


def _events(repo: Repo) -> list:
    events, malformed = read_events(repo.root / ".harness/missions/m/events.ndjson")
    assert malformed == 0
    return events


def test_run_script_runtime_end_to_end(repo: Repo) -> None:
    _setup(repo)
    head = git(repo.root, "rev-parse", "HEAD").strip()
    result = repo.uh("mission", "run", "m", "--runtime", "fixer", "--json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["status"] == "succeeded" and data["touched_paths"] == ["a.txt"]
    assert data["final_message"] == "appended to a.txt"
    assert len(data["diff_hash"]) == 16
    # The main checkout is untouched.
    assert (repo.root / "a.txt").read_text() == "hello\n"
    assert git(repo.root, "status", "--porcelain") == ""
    assert git(repo.root, "rev-parse", "HEAD").strip() == head
    # The work in the sandbox; uh's records about it in the operator's .harness/.
    index = yaml.safe_load((repo.root / ".harness/sandboxes/index.yaml").read_text())
    worktree = Path(index["sandboxes"][0]["worktree"])
    artifacts = repo.root / ".harness/sandboxes" / data["sandbox"] / "missions/m"
    outbox = repo.root / ".harness/sandboxes" / data["sandbox"] / "agent"
    assert not (worktree / ".harness/missions/m/runtime-session.yaml").exists()
    assert (worktree / "a.txt").read_text() == "hello\nfixed\n"
    assert (artifacts / "runtime-final.txt").read_text() == "appended to a.txt\n"
    session = yaml.safe_load((artifacts / "runtime-session.yaml").read_text())
    assert session["schema_version"] == "uh.runtime-result.v0"
    assert session["status"] == "completed" and session["base_commit"] == head
    assert session["changes"]["files_changed"] == ["a.txt"]
    patch = (artifacts / "diff.patch").read_text()
    assert "+fixed" in patch and ".harness" not in patch
    prompt = (outbox / "prompt.md").read_text()
    assert prompt.startswith("# Mission m: fix a") and "uh-runtime-final-message" in prompt
    kinds = [e.event for e in _events(repo)]
    assert kinds[0] == "runtime.started" and kinds[-1] == "runtime.finished"
    assert "runtime.progress" in kinds
    finished = _events(repo)[-1]
    assert finished.status == "succeeded" and finished.diff_hash == data["diff_hash"]
    assert (finished.files_changed, finished.final_message) == (1, "appended to a.txt")
    index = yaml.safe_load((repo.root / ".harness/sandboxes/index.yaml").read_text())
    assert [s["id"] for s in index["sandboxes"]] == [data["sandbox"]]
    # what the dashboard and status say of the run is what the command printed
    [row] = json.loads(repo.uh("status", "--json").stdout)["missions"][0]["runtimes"]
    assert (row["status"], row["diff_hash"]) == ("succeeded", data["diff_hash"])
    assert (row["files_changed"], row["final_message"]) == (1, "appended to a.txt"), row


def test_command_runtime_gets_the_prompt_file_quoted(repo: Repo) -> None:
    _setup(repo)
    add_manifest(repo, "catter", "runtime_kind: command\nconfig:\n  command: cat {prompt_file}\n")
    result = repo.uh("mission", "run", "m", "--runtime", "catter", "--json")
    data = json.loads(result.stdout)
    # cat changes nothing: whatever its final message says, that is no_change (exit 1)
    assert result.code == 1 and data["status"] == "no_change"
    assert "changed nothing" in data["error"]
    log = (
        repo.root / ".harness/sandboxes" / data["sandbox"] / "agent/runtime.stdout.log"
    ).read_text()
    assert log.startswith("# Mission m: fix a")
    # The prompt's own example sentinel block is the final message of a cat.
    assert data["final_message"].startswith("<one paragraph")


def test_command_without_placeholder_is_refused_before_anything_starts(repo: Repo) -> None:
    _setup(repo)
    add_manifest(repo, "bad", "runtime_kind: command\nconfig:\n  command: my-agent --go\n")
    result = repo.uh("mission", "run", "m", "--runtime", "bad")
    assert result.code == 2 and "{prompt_file}" in result.stderr
    assert not any((repo.root / ".harness/sandboxes").glob("sbx-*"))


def test_failing_runtime_is_a_runtime_failure(repo: Repo) -> None:
    _setup(repo)
    add_manifest(repo, "crash", "runtime_kind: script\nconfig:\n  script: echo boom >&2; exit 3\n")
    result = repo.uh("mission", "run", "m", "--runtime", "crash")
    assert result.code == 1
    assert result.stdout.startswith("[FAILED] m on crash")
    assert "crash ended with exit 3" in result.stdout
    assert " · 0 files changed · diff -\n" in result.stdout  # no change: no diff to name
    assert _events(repo)[-1].status == "failed"


def test_dry_run_creates_nothing(repo: Repo) -> None:
    _setup(repo)
    before = sorted(p.relative_to(repo.root) for p in repo.root.rglob("*") if ".git/" not in str(p))
    result = repo.uh("mission", "dry-run", "m", "--runtime", "fixer")
    assert result.code == 0
    assert "command: /bin/sh -c" in result.stdout
    assert "--- prompt ---\n# Mission m: fix a" in result.stdout
    assert "uh-runtime-final-message" in result.stdout
    after = sorted(p.relative_to(repo.root) for p in repo.root.rglob("*") if ".git/" not in str(p))
    assert after == before


def test_capabilities_refuse_unless_forced(repo: Repo) -> None:
    _setup(repo)
    repo.mission("m", MISSION + "capabilities: [network, gpu]\n")
    add_manifest(
        repo,
        "mapped",
        FIXER.replace(
            "status: active\n", "status: active\ncapabilities: {network: true, gpu: false}\n"
        ),
    )
    for runtime in ("fixer", "mapped"):
        for action in ("dry-run", "run"):
            result = repo.uh("mission", action, "m", "--runtime", runtime)
            assert result.code == 2, (runtime, action)
            assert "gpu" in result.stderr and "--force" in result.stderr
    assert "network" in repo.uh("mission", "run", "m", "--runtime", "fixer").stderr
    assert "network" not in repo.uh("mission", "run", "m", "--runtime", "mapped").stderr
    forced = repo.uh("mission", "run", "m", "--runtime", "mapped", "--force")
    assert forced.code == 0


def test_timeout_stops_the_agent(repo: Repo) -> None:
    _setup(repo)
    marker = f"uh-timeout-{os.getpid()}"
    add_manifest(repo, "slow", f'runtime_kind: script\nconfig:\n  script: "sleep 60; : {marker}"\n')
    started = time.monotonic()
    result = repo.uh("mission", "run", "m", "--runtime", "slow", "--timeout", "1")
    assert result.code == 1 and "timed out" in result.stdout
    assert time.monotonic() - started < 15
    assert live_processes_with(marker) == []


def test_cancel_stops_the_whole_group_and_records_it(repo: Repo) -> None:
    _setup(repo)
    marker = f"uh-cancel-{os.getpid()}"
    add_manifest(
        repo,
        "sleeper",
        f'runtime_kind: script\nconfig:\n  script: "echo up; (sleep 77; : {marker}) & '
        f"trap '' INT; sleep 88; : {marker}\"\n",
    )
    runner = repo.start(
        "mission", "run", "m", "--runtime", "sleeper", "--json", stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 20
    while len(live_processes_with(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    cancel = repo.uh("mission", "cancel", "m", "--reason", "operator changed their mind")
    assert cancel.code == 0, (
        cancel,
        live_processes_with(marker),
        runner.poll(),
        list((repo.root / ".harness/missions/m").rglob("*")),
    )
    out, _ = runner.communicate(timeout=30)
    assert runner.returncode == 1
    assert json.loads(out)["status"] == "cancelled"
    assert live_processes_with(marker) == []
    events = _events(repo)
    cancelled = [e for e in events if e.event == "runtime.cancelled"]
    assert cancelled and cancelled[0].reason == "operator changed their mind"
    assert events[-1].event == "runtime.finished" and events[-1].status == "cancelled"
    assert repo.uh("mission", "cancel", "m").code == 1  # nothing left to cancel


def test_ctrl_c_cancels_and_exits_130(repo: Repo) -> None:
    _setup(repo)
    marker = f"uh-ctrlc-{os.getpid()}"
    add_manifest(
        repo, "sleeper", f'runtime_kind: script\nconfig:\n  script: "sleep 60; : {marker}"\n'
    )
    runner = repo.start("mission", "run", "m", "--runtime", "sleeper")
    deadline = time.monotonic() + 20
    while not live_processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    runner.send_signal(signal.SIGINT)
    runner.communicate(timeout=30)
    assert runner.returncode == 130
    assert live_processes_with(marker) == []
    assert _events(repo)[-1].status == "cancelled"


def test_a_sandbox_in_use_cannot_be_discarded(repo: Repo) -> None:
    _setup(repo)
    marker = f"uh-inuse-{os.getpid()}"
    add_manifest(
        repo, "sleeper", f'runtime_kind: script\nconfig:\n  script: "sleep 60; : {marker}"\n'
    )
    runner = repo.start("mission", "run", "m", "--runtime", "sleeper", "--json")
    deadline = time.monotonic() + 20
    while not live_processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    (registration,) = (repo.root / ".harness/missions/m/active").glob("*.json")
    sandbox = registration.stem
    refused = repo.uh("sandbox", "discard", sandbox)
    assert refused.code == 2 and "in use" in refused.stderr and "mission cancel m" in refused.stderr
    assert repo.uh("mission", "cancel", "m").code == 0
    runner.communicate(timeout=30)
    assert repo.uh("sandbox", "discard", sandbox).code == 0


def test_timeouts_must_be_positive(repo: Repo) -> None:
    _setup(repo)
    for args in (
        ("mission", "run", "m", "--runtime", "fixer", "--timeout", "0"),
        ("mission", "run-all", "m", "--timeout", "-5"),
    ):
        result = repo.uh(*args)
        assert result.code == 2 and "must be more than 0" in result.stderr
