"""``uh-core verify`` end to end: real repositories, real check commands, real event logs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tests.conftest import Repo, git, interruptible
from uh_core.events.reader import read_events
from uh_core.models.verification import VerificationResult


def _result(repo: Repo, mission_id: str) -> VerificationResult:
    path = repo.root / ".harness/missions" / mission_id / "verification.yaml"
    return VerificationResult.model_validate(yaml.safe_load(path.read_text()))


def _events(repo: Repo, mission_id: str) -> list:
    events, malformed = read_events(repo.root / ".harness/missions" / mission_id / "events.ndjson")
    assert malformed == 0
    return events


MIXED = """\
id: mixed
acceptance_criteria:
  - id: ok
    check_command: "true"
  - id: warn-fails
    check_command: "false"
    severity: warn
  - id: manual
    description: a person looks at it
    severity: warn
verification:
  required_checks:
    - name: compile step
      command: "echo compiled"
"""


def test_pass_with_warn_failure_and_summary_lines(repo: Repo) -> None:
    repo.mission("mixed", MIXED)
    result = repo.uh("verify", "mixed")
    assert result.code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "[PASS] mixed",
        "checks: 1 passed, 0 failed, 0 blocked",
        "acceptance: 1 passed, 0 block-failed, 1 warn-failed, 1 blocked (total 3)",
    ]
    assert any(line.strip().startswith("failed     warn-fails (warn): exit 1") for line in lines)
    assert lines[-1] == "artifact: .harness/missions/mixed/verification.yaml"
    verdict = _result(repo, "mixed")
    assert verdict.status == "passed"
    codes = {(f.code, f.severity, f.ac_id) for f in verdict.findings}
    assert ("ac_failed", "warning", "warn-fails") in codes
    assert ("ac_without_command", "warning", "manual") in codes


def test_failed_and_blocked(repo: Repo) -> None:
    repo.mission(
        "m",
        """\
        id: m
        acceptance_criteria:
          - id: broken
            check_command: "echo nope >&2; exit 3"
          - id: unchecked
        """,
    )
    result = repo.uh("verify", "m")
    assert result.code == 1
    assert result.stdout.startswith("[FAIL] m\n")
    assert "failed     broken (block): exit 3: nope" in result.stdout
    assert "blocked    unchecked (block): no check_command" in result.stdout
    repo.mission("n", "id: n\nacceptance_criteria:\n  - id: unchecked\n")
    result = repo.uh("verify", "n")
    assert result.code == 1 and result.stdout.startswith("[BLOCKED] n\n")
    findings = {f.code: f for f in _result(repo, "n").findings}
    assert findings["ac_without_command"].severity == "error"


def test_nothing_can_fail_is_blocked(repo: Repo, compat: Path) -> None:
    shutil.copytree(
        compat / "harness" / "missions" / "codex-e2e-smoke",
        repo.root / ".harness/missions/codex-e2e-smoke",
    )
    result = repo.uh("verify", "codex-e2e-smoke")
    assert result.code == 1
    assert result.stdout.startswith("[BLOCKED] codex-e2e-smoke\n")
    verdict = _result(repo, "codex-e2e-smoke")
    assert {f.code for f in verdict.findings} == {"manual_check", "nothing_can_fail"}
    assert verdict.checks[0].type == "manual"
    assert "checks: 0 passed, 0 failed, 0 blocked" in result.stdout


def test_events_in_order_and_written_live(repo: Repo) -> None:
    # The second criterion reads the log: it passes only if the first one's result is
    # already on disk while verify is still running.
    repo.mission(
        "live",
        """\
        id: live
        verification:
          required_checks:
            - name: first
              command: "true"
        acceptance_criteria:
          - id: one
            check_command: "true"
          - id: two
            check_command: >-
              grep -q '"event":"acceptance.checked".*"ac_id":"one"'
              "$UH_MISSION_DIR/events.ndjson"
        """,
    )
    result = repo.uh("verify", "live")
    assert result.code == 0, result.stdout
    kinds = [
        (e.event, getattr(e, "ac_id", getattr(e, "name", None))) for e in _events(repo, "live")
    ]
    assert kinds == [
        ("verification.started", None),
        ("check.checked", "first"),
        ("acceptance.started", "one"),
        ("acceptance.checked", "one"),
        ("acceptance.started", "two"),
        ("acceptance.checked", "two"),
        ("verification.finished", None),
    ]
    run_ids = {e.run_id for e in _events(repo, "live")}
    assert run_ids == {_result(repo, "live").run_id}


def test_check_environment(repo: Repo) -> None:
    repo.mission(
        "env",
        """\
        id: env
        acceptance_criteria:
          - id: env
            check_command: 'echo "$MISSION_ID|$UH_ROOT|$UH_MISSION_DIR|$UH_RUN_ID|$(pwd)"'
        """,
    )
    assert repo.uh("verify", "env").code == 0
    verdict = _result(repo, "env")
    mission_id, root, mission_dir, run_id, cwd = (
        verdict.acceptance_criteria[0].stdout_snippet.strip().split("|")
    )
    assert mission_id == "env"
    assert Path(root) == repo.root == Path(cwd)
    assert Path(mission_dir) == repo.root / ".harness/missions/env"
    assert run_id == verdict.run_id


def test_checks_run_from_a_subfolder_still_run_at_the_root(repo: Repo) -> None:
    """verify moves to the folder its checks run in, wherever it was started from."""
    repo.mission(
        "where",
        """\
        id: where
        acceptance_criteria:
          - id: here
            check_command: 'pwd'
        """,
    )
    sub = repo.root / "deep" / "er"
    sub.mkdir(parents=True)
    proc = subprocess.run(
        [sys.executable, "-m", "uh_core", "verify", "where"],
        cwd=sub,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert _result(repo, "where").acceptance_criteria[0].stdout_snippet == f"{repo.root}\n"


def test_a_failing_check_fails_even_when_sigchld_is_ignored(repo: Repo) -> None:
    """A parent may hand down SIGCHLD ignored; the kernel would then reap the checks and
    their exit statuses would read as 0. uh-core puts the default back first."""
    repo.mission(
        "sigchld",
        """\
        id: sigchld
        acceptance_criteria:
          - id: fails
            check_command: 'exit 3'
        """,
    )
    launcher = (
        "import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); "
        "os.execv(sys.executable, [sys.executable, '-m', 'uh_core', *sys.argv[1:]])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", launcher, "verify", "sigchld", "--root", str(repo.root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    criterion = _result(repo, "sigchld").acceptance_criteria[0]
    assert (criterion.status, criterion.exit_code) == ("failed", 3)


def test_repeat_marks_a_changing_verdict_flaky(repo: Repo) -> None:
    # Fails on every second run: a counter outside the repository keeps state.
    counter = repo.root.parent / "counter"
    flip = (
        f"n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}; "
        "echo run $n; [ $((n % 2)) -eq 0 ]"
    )
    repo.mission(
        "flaky",
        f"""\
        id: flaky
        acceptance_criteria:
          - id: steady
            check_command: "true"
          - id: flip
            check_command: '{flip}'
        """,
    )
    result = repo.uh("verify", "flaky", "--repeat", "3")
    assert result.code == 1
    assert result.stdout.startswith("[BLOCKED] flaky\n")
    verdict = _result(repo, "flaky")
    flip_result = verdict.acceptance_criteria[1]
    assert flip_result.status == "unobserved" and flip_result.flaky
    assert flip_result.runs == ["passed", "failed", "passed"]
    assert flip_result.exit_code == 1  # the failing run's evidence is kept
    assert verdict.acceptance_criteria[0].flaky is False
    assert any(f.code == "ac_flaky" and f.severity == "error" for f in verdict.findings)
    assert verdict.summary.acceptance.unobserved == 1
    assert flip_result.stdout_snippet == "run 1\n"  # the failing (second) run's output
    assert flip_result.stdout_log is not None and flip_result.stdout_log.endswith(
        "ac-flip.2.stdout.log"
    )
    logs = sorted(p.name for p in (repo.root / flip_result.stdout_log).parent.iterdir())
    assert {"ac-flip.1.stdout.log", "ac-flip.2.stdout.log", "ac-flip.3.stdout.log"} <= set(logs)
    # Silent streams leave no file: flip never wrote to stderr, steady wrote nothing at all.
    assert flip_result.stderr_log is None
    assert not [name for name in logs if "stderr" in name or name.startswith("ac-steady")]


def test_flaky_warn_ac_does_not_block(repo: Repo) -> None:
    counter = repo.root.parent / "counter2"
    flip = (
        f"n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}; [ $((n % 2)) -eq 0 ]"
    )
    repo.mission(
        "fw",
        f"id: fw\nacceptance_criteria:\n  - id: ok\n    check_command: 'true'\n"
        f"  - id: flip\n    severity: warn\n    check_command: '{flip}'\n",
    )
    assert repo.uh("verify", "fw", "--repeat", "2").code == 0


def test_json_output_is_one_document(repo: Repo) -> None:
    repo.mission("j", "id: j\nacceptance_criteria:\n  - id: a\n    check_command: 'echo hi'\n")
    result = repo.uh("verify", "j", "--json")
    assert result.code == 0
    document = json.loads(result.stdout)
    assert document["status"] == "passed"
    assert document["acceptance_criteria"][0]["stdout_snippet"] == "hi\n"
    VerificationResult.model_validate(document)


def test_snippets_are_bounded_and_full_output_kept(repo: Repo) -> None:
    repo.mission(
        "big",
        """\
        id: big
        acceptance_criteria:
          - id: loud
            check_command: 'seq 1 100000; printf "\\377\\376 bad utf8\\n" >&2'
        """,
    )
    assert repo.uh("verify", "big").code == 0
    loud = _result(repo, "big").acceptance_criteria[0]
    assert loud.stdout_snippet.startswith("1\n2\n3\n")
    assert loud.stdout_snippet.rstrip().endswith("100000")
    assert "bytes omitted" in loud.stdout_snippet
    assert len(loud.stdout_snippet) < 10_000
    assert "\ufffd" in loud.stderr_snippet and "bad utf8" in loud.stderr_snippet
    full = (repo.root / loud.stdout_log).read_text()
    assert full.splitlines()[-1] == "100000" and len(full.splitlines()) == 100000


def test_a_log_exists_only_for_a_stream_that_printed(repo: Repo) -> None:
    """Evidence never points at a missing file: a silent stream has no log and says so."""
    repo.mission(
        "quiet",
        """\
        id: quiet
        verification:
          required_checks:
            - name: noisy check
              command: "echo compiled"
        acceptance_criteria:
          - id: silent
            check_command: "true"
          - id: complains
            check_command: "echo nope >&2; false"
            severity: warn
        """,
    )
    assert repo.uh("verify", "quiet").code == 0
    verdict = _result(repo, "quiet")
    (check,) = verdict.checks
    silent, complains = verdict.acceptance_criteria
    assert check.stdout_log and check.stderr_log is None
    assert (silent.stdout_log, silent.stderr_log) == (None, None)
    assert (silent.stdout_snippet, silent.stderr_snippet) == ("", "")
    assert complains.stdout_log is None and complains.stderr_log
    assert (repo.root / check.stdout_log).read_text() == "compiled\n"
    assert (repo.root / complains.stderr_log).read_text() == "nope\n"
    run_dir = repo.root / ".harness/missions/quiet/runs" / verdict.run_id
    logs = sorted(p.name for p in run_dir.glob("*.log"))
    assert logs == ["ac-complains.stderr.log", "check-01-noisy-check.stdout.log"]


def test_generated_files_never_dirty_the_tree(repo: Repo) -> None:
    repo.mission("m", "id: m\nacceptance_criteria:\n  - id: a\n    check_command: 'true'\n")
    repo.commit("mission")
    assert repo.uh("verify", "m").code == 0
    assert git(repo.root, "status", "--porcelain") == ""


def test_interrupt_stops_the_check_writes_what_is_known_and_exits_130(repo: Repo) -> None:
    marker = f"uh-interrupt-{os.getpid()}"
    repo.mission(
        "slow",
        f"""\
        id: slow
        acceptance_criteria:
          - id: quick
            check_command: "true"
          - id: slow
            check_command: "sleep 77; : {marker}"
          - id: never
            check_command: "true"
        """,
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "uh_core", "verify", "slow", "--root", str(repo.root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    log = repo.root / ".harness/missions/slow/events.ndjson"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if log.exists() and '"ac_id":"slow"' in log.read_text():
            break
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err
    verdict = _result(repo, "slow")
    assert verdict.status == "blocked"
    assert [a.status for a in verdict.acceptance_criteria] == ["passed", "unobserved", "unobserved"]
    assert any(f.code == "interrupted" for f in verdict.findings)
    assert _events(repo, "slow")[-1].event == "verification.finished"
    alive = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    states = [
        Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] for pid in alive.split()
    ]
    assert all(state == "Z" for state in states), states
