"""Timeouts end to end: the real ``uh-core`` CLI, a real git repository, real processes."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

GIT_ENV = {
    "GIT_AUTHOR_NAME": "uh tests",
    "GIT_AUTHOR_EMAIL": "tests@uh.invalid",
    "GIT_COMMITTER_NAME": "uh tests",
    "GIT_COMMITTER_EMAIL": "tests@uh.invalid",
}


def _uh_core() -> str:
    script = Path(sys.executable).with_name("uh-core")
    return str(script) if script.exists() else shutil.which("uh-core") or "uh-core"


def _uh(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_uh_core(), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _project(tmp_path: Path, mission_id: str, mission_yaml: str) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True, env=env)
    (root / "README.md").write_text("# timeouts\n", encoding="utf-8")
    init = _uh("init", "--root", str(root))
    assert init.returncode == 0, init.stderr
    mission = root / ".harness" / "missions" / mission_id / "mission.yaml"
    mission.parent.mkdir(parents=True, exist_ok=True)
    mission.write_text(textwrap.dedent(mission_yaml), encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "mission"], cwd=root, check=True, env=env)
    return root


def _marker() -> str:
    return f"300.{secrets.randbelow(10**9):09d}"


def _live_with(marker: str) -> list[str]:
    """Command lines of live (non-zombie) processes that mention ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, UnicodeDecodeError):
            continue
        if state != b"Z" and marker in cmdline:
            found.append(f"{entry} {state.decode()} {cmdline}")
    return found


def _no_process_left(marker: str) -> list[str]:
    deadline = time.monotonic() + 1.0
    left = _live_with(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = _live_with(marker)
    return left


def _result(root: Path, mission_id: str) -> dict[str, Any]:
    path = root / ".harness" / "missions" / mission_id / "verification.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def _events(root: Path, mission_id: str) -> list[dict[str, Any]]:
    path = root / ".harness" / "missions" / mission_id / "events.ndjson"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_ac_timeout_with_background_grandchild(tmp_path: Path) -> None:
    marker = _marker()
    root = _project(
        tmp_path,
        "sleepy",
        f"""\
        schema_version: uh.mission.v0
        id: sleepy
        title: a check that never ends
        acceptance_criteria:
          - id: ac-sleeps
            description: leaves a background sleep holding stdout
            check_command: "sleep {marker} & sleep {marker}"
            timeout_s: 1
          - id: ac-after
            description: still runs after the timeout
            check_command: "echo after"
        """,
    )
    began = time.monotonic()
    proc = _uh("verify", "sleepy", "--root", str(root))
    elapsed = time.monotonic() - began
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # the timeout ended it, not the 300 s sleep (no speed is asserted: a loaded machine is slow)
    assert elapsed < 120, f"verify took {elapsed:.1f}s"
    assert proc.stdout.startswith("[FAIL] sleepy\n")
    assert "ac-sleeps" in proc.stdout and "timed out" in proc.stdout

    result = _result(root, "sleepy")
    assert result["status"] == "failed"
    sleeps, after = result["acceptance_criteria"]
    assert (sleeps["id"], sleeps["status"], sleeps["timed_out"]) == ("ac-sleeps", "failed", True)
    assert sleeps.get("exit_code") is None  # no exit code: written without the key
    assert 1000 <= sleeps["duration_ms"] < 120_000  # stopped at its 1 s timeout, not at 300 s
    assert (after["status"], after["timed_out"], after["stdout_snippet"]) == (
        "passed",
        False,
        "after\n",
    )
    checked = [e for e in _events(root, "sleepy") if e["event"] == "acceptance.checked"]
    assert [(e["ac_id"], e["timed_out"]) for e in checked] == [
        ("ac-sleeps", True),
        ("ac-after", False),
    ]
    assert _no_process_left(marker) == []


def test_global_timeout_applies_to_criteria_without_their_own(tmp_path: Path) -> None:
    marker = _marker()
    root = _project(
        tmp_path,
        "global-timeout",
        f"""\
        schema_version: uh.mission.v0
        id: global-timeout
        verification:
          required_checks:
            - name: slow-check
              command: "sleep {marker}"
        acceptance_criteria:
          - id: ac-default
            description: no timeout_s of its own
            check_command: "sleep {marker}"
          - id: ac-own
            description: its own timeout_s outlasts --timeout
            check_command: "sleep 1.2"
            timeout_s: 30
        """,
    )
    began = time.monotonic()
    proc = _uh("verify", "global-timeout", "--root", str(root), "--timeout", "0.5", "--json")
    elapsed = time.monotonic() - began
    assert proc.returncode == 1, proc.stderr
    assert elapsed < 120, f"verify took {elapsed:.1f}s"  # the timeouts ended it, not 300 s
    printed = json.loads(proc.stdout)
    result = _result(root, "global-timeout")
    assert printed["run_id"] == result["run_id"]

    (check,) = result["checks"]
    assert (check["name"], check["status"], check["timed_out"]) == ("slow-check", "failed", True)
    default, own = result["acceptance_criteria"]
    assert (default["id"], default["status"], default["timed_out"]) == (
        "ac-default",
        "failed",
        True,
    )
    assert default["duration_ms"] < 3000
    assert (own["id"], own["status"], own["timed_out"]) == ("ac-own", "passed", False)
    assert own["duration_ms"] >= 1200
    assert _no_process_left(marker) == []


# verify itself, in a fresh interpreter, so VmHWM is its own peak (pydantic, YAML and all).
VERIFY_IN_PROCESS = """
import json, sys
from pathlib import Path
from uh_core.cli.main import run

code = run(["verify", sys.argv[1], "--root", sys.argv[2]])
status = Path("/proc/self/status").read_text()
hwm = int(next(x for x in status.splitlines() if x.startswith("VmHWM:")).split()[1])
print(json.dumps({"code": code, "vm_hwm_kb": hwm}))
"""


@pytest.mark.slow
def test_one_gigabyte_of_check_output_keeps_verify_small(tmp_path: Path) -> None:
    root = _project(
        tmp_path,
        "flood",
        """\
        schema_version: uh.mission.v0
        id: flood
        acceptance_criteria:
          - id: ac-flood
            description: prints a gigabyte
            check_command: "printf START; head -c 1000000000 /dev/zero; printf STOP"
        """,
    )
    proc = subprocess.run(
        [sys.executable, "-c", VERIFY_IN_PROCESS, "flood", str(root)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    try:
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout.splitlines()[-1])
        assert report["code"] == 0
        peak_mb = report["vm_hwm_kb"] / 1024
        assert peak_mb < 100, f"verify peaked at {peak_mb:.1f} MB"
        (ac,) = _result(root, "flood")["acceptance_criteria"]
        assert ac["status"] == "passed"
        assert ac["stdout_snippet"].startswith("START") and ac["stdout_snippet"].endswith("STOP")
        assert "bytes omitted" in ac["stdout_snippet"] and len(ac["stdout_snippet"]) < 10_000
        assert (root / ac["stdout_log"]).stat().st_size == 1_000_000_009
    finally:
        for log in root.glob(".harness/missions/flood/runs/*/*.log"):
            log.unlink()
