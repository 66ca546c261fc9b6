"""Steering a ``mission run`` (``uh-core mission steer``): a script runtime at work is run again
in its sandbox with the message when its turn ends; several runs at once need ``--runtime``."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from tests.conftest import Repo
from tests.runtime.helpers import add_manifest

MISSION = "id: m\ntitle: fix a\nacceptance_criteria:\n  - id: fixed\n    check_command: grep -q fixed a.txt\n"


def _manifest(flags: Path) -> str:
    # its first turn says it is at work and waits for the test; a continued turn (UH_STEERING
    # set, the message in its prompt file) does what it was told
    return f"""runtime_kind: script
status: active
config:
  isolation_writable: ['{flags}']
  script: |
    if [ -z "$UH_STEERING" ]; then
      echo "first" >> a.txt
      touch {flags}/ready
      for i in $(seq 1 600); do [ -e {flags}/go ] && break; sleep 0.05; done
    else
      grep -q "The operator's steering" "$UH_PROMPT_FILE" && echo "fixed: $UH_STEERING" >> a.txt
    fi
    printf '```uh-runtime-final-message\\ndone\\n```\\n'
"""


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_a_mission_run_is_steered_and_continues_in_its_sandbox(repo: Repo, tmp_path: Path) -> None:
    flags = tmp_path / "flags"
    flags.mkdir()
    repo.write("a.txt", "hello\n")
    repo.mission("m", MISSION)
    add_manifest(repo, "fixer", _manifest(flags))
    repo.commit("setup")
    run = repo.start("mission", "run", "m", "--runtime", "fixer", "--json", stderr=subprocess.PIPE)
    try:
        _wait_for(flags / "ready")
        sent = repo.uh("mission", "steer", "m", "append fixed", "--by", "ana")
        assert sent.code == 0, sent.stderr
        assert sent.stdout.startswith("sent to fixer on m in mission run in sandbox ")
        (flags / "go").write_text("go")
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
    data = json.loads(out)
    assert run.returncode == 0 and data["status"] == "succeeded", err
    verified = repo.uh("verify", "m", "--sandbox", data["sandbox"], "--json")
    assert json.loads(verified.stdout)["status"] == "passed"  # the continued turn's work
    log = [
        json.loads(line)
        for line in (repo.root / ".harness/missions/m/events.ndjson").read_text().splitlines()
    ]
    steered = [e for e in log if e["event"] == "runtime.steered"]
    assert [(e["message"], e["by"], e["delivered"]) for e in steered] == [
        ("append fixed", "ana", True)
    ]
    assert sum(1 for e in log if e["event"] == "runtime.started") == 2
    # the run has ended: refused, nothing written
    late = repo.uh("mission", "steer", "m", "more")
    assert late.code == 2 and "nothing is working on m now" in late.stderr
