"""SIGTERM ends a harness run promptly with the ledger written, under either isolation, and
nothing the agent started outlives it — even a process that ignores SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from tests.harness.conftest import Project
from tests.security.conftest import alive_with


def test_sigterm_stops_the_run_promptly_with_the_ledger_written(
    project: Project, isolation: str
) -> None:
    started = project.agents / "started"
    marker = f"uh-stubborn-{isolation}-{time.time_ns()}"
    body = (
        f"subprocess.Popen(['sh', '-c', 'trap \"\" TERM; exec -a {marker} sleep 300'],"
        " start_new_session=True)\n"
        f"pathlib.Path({str(started)!r}).touch()\nimport time\ntime.sleep(60)\n"
    )
    agent = project.agent("stubborn", body)
    command = [sys.executable, "-m", "uh_core", "harness", "run", "--agent", agent, "--json"]
    proc = subprocess.Popen(
        [*command, "--isolation", isolation, "--root", str(project.root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), proc.stderr.read() if proc.poll() is not None else "not started"
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 15
    data = json.loads(out)
    assert data["status"] == "interrupted"
    ledger = json.loads((project.root / data["ledger"]).read_text())
    assert ledger["status"] == "interrupted" and ledger["stopped"]
    assert data["requirements"][0]["attempts"][0]["outcome"] == "interrupted"
    deadline = time.monotonic() + 5
    while alive_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive_with(marker), "a process the agent started outlived the run"
