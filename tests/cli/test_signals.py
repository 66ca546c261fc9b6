"""SIGTERM (a CI runner, ``timeout``, systemd) and SIGHUP (a closing terminal) end every
long ``uh-core`` command as Ctrl-C does: exit 130, the record written ``interrupted``, and
nothing it started left running — the check or agent in its own session included.

Each command runs a check or agent that writes its pid to a file and sleeps under a unique
name (``sleep 60.<tag>``); the signal is sent once the pid file exists. Ctrl-C itself is
tested beside each command (tests/verify, tests/runtime, tests/runall, tests/harness), and
SIGTERM on a harness run under either isolation in tests/security/test_signals.py.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from tests.conftest import Repo
from tests.harness.conftest import Project, project, project_template  # noqa: F401 - re-exported
from tests.runtime.helpers import add_manifest, live_processes_with
from uh_core.events.reader import read_events
from uh_core.procid import start_time

_TAGS = itertools.count(1)
WAIT_S = 30.0  # for the check or agent to start, on a busy machine
PROMPT_S = 15.0  # from the signal to the command's exit


class Sleeper:
    """A ``sleep`` with a name no other process has, that writes its pid where we look."""

    def __init__(self, folder: Path) -> None:
        self.tag = f"{os.getpid()}{next(_TAGS):03d}"
        self.pidfile = folder / f"sleeper-{self.tag}.pid"
        self.started: int | None = None

    @property
    def shell(self) -> str:
        return f"echo $$ > {self.pidfile}; exec sleep 60.{self.tag}"

    def wait_started(self, proc: subprocess.Popen[str]) -> int:
        deadline = time.monotonic() + WAIT_S
        while not self._pid() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        pid = self._pid()
        assert pid, "the check or agent never started"
        # the process as it is now (exec keeps both): pid_max is 32,768 here, and a whole
        # suite starts more processes than that, so a pid alone may be another process later
        self.started = start_time(pid)
        return pid

    def _pid(self) -> int:
        try:
            return int(self.pidfile.read_text().strip() or 0)
        except (OSError, ValueError):
            return 0

    def assert_gone(self) -> None:
        # A process on its way out has no command line any more but is not a zombie yet:
        # wait for both looks to agree it is gone, not for the first.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (
            live_processes_with(f"sleep 60.{self.tag}") or _alive(self._pid(), self.started)
        ):
            time.sleep(0.05)
        assert not live_processes_with(f"sleep 60.{self.tag}"), "the check outlived uh-core"
        pid = self._pid()
        assert not _alive(pid, self.started), Path(f"/proc/{pid}/stat").read_text()


def _alive(pid: int, started: int | None = None) -> bool:
    """``pid`` is a live process (not a zombie) — the one that started at ``started``, when
    given (a reused pid is another process)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    if started is not None and start_time(pid) != started:
        return False
    return fields[0] != "Z"


def _signal(proc: subprocess.Popen[str], signum: signal.Signals) -> tuple[str, str]:
    sent = time.monotonic()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=PROMPT_S * 2)
    assert time.monotonic() - sent < PROMPT_S, "the command did not end promptly"
    assert proc.returncode == 130, (proc.returncode, out, err)
    assert "Traceback" not in err, err
    return out, err


def _events(repo: Repo, mission_id: str) -> list[Any]:
    events, _ = read_events(repo.root / f".harness/missions/{mission_id}/events.ndjson")
    return events


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_verify(repo: Repo, tmp_path: Path, signum: signal.Signals) -> None:
    sleeper = Sleeper(tmp_path)
    repo.mission(
        "slow",
        f"""\
        id: slow
        acceptance_criteria:
          - id: slow
            check_command: "{sleeper.shell}"
          - id: never
            check_command: "true"
        """,
    )
    proc = repo.start("verify", "slow", stderr=subprocess.PIPE)
    sleeper.wait_started(proc)
    _out, err = _signal(proc, signum)
    assert "interrupted" in err
    record = yaml.safe_load((repo.root / ".harness/missions/slow/verification.yaml").read_text())
    assert any(f["code"] == "interrupted" for f in record["findings"])
    assert [a["status"] for a in record["acceptance_criteria"]] == ["unobserved", "unobserved"]
    assert _events(repo, "slow")[-1].event == "verification.finished"
    sleeper.assert_gone()


def _agent_setup(repo: Repo, sleeper: Sleeper, *runtimes: str) -> None:
    repo.write("a.txt", "hello\n")
    repo.mission("m", "id: m\nacceptance_criteria:\n  - id: ok\n    check_command: 'true'\n")
    for name in runtimes:
        script = json.dumps(sleeper.shell)
        add_manifest(
            repo, name, f"runtime_kind: script\nstatus: active\nconfig:\n  script: {script}\n"
        )
    repo.commit("setup")


def test_mission_run(repo: Repo, tmp_path: Path) -> None:
    sleeper = Sleeper(tmp_path)
    _agent_setup(repo, sleeper, "sleeper")
    proc = repo.start("mission", "run", "m", "--runtime", "sleeper", "--isolation", "none",
                      "--json", stderr=subprocess.PIPE)  # fmt: skip
    sleeper.wait_started(proc)
    out, _err = _signal(proc, signal.SIGTERM)
    assert json.loads(out)["status"] == "cancelled"
    cancelled = [e for e in _events(repo, "m") if e.event == "runtime.cancelled"]
    assert cancelled[0].reason == "interrupted (SIGTERM)"
    assert not list((repo.root / ".harness/missions/m/active").glob("*.json"))
    sleeper.assert_gone()


def test_run_all(repo: Repo, tmp_path: Path) -> None:
    sleeper = Sleeper(tmp_path)
    _agent_setup(repo, sleeper, "slow")
    proc = repo.start("mission", "run-all", "m", "--isolation", "none", "--json",
                      stderr=subprocess.PIPE)  # fmt: skip
    sleeper.wait_started(proc)
    out, _err = _signal(proc, signal.SIGHUP)
    comparison = json.loads(out)
    assert comparison["interrupted"] is True
    sleeper.assert_gone()


def test_harness_run(project: Project, tmp_path: Path) -> None:  # noqa: F811
    sleeper = Sleeper(tmp_path)
    body = f"subprocess.Popen(['sh', '-c', {sleeper.shell!r}], start_new_session=True)\n"
    body += "import time\ntime.sleep(60)\n"
    agent = project.agent("sleeper", body)
    proc = project.repo.start("harness", "run", "--agent", agent, "--isolation", "none",
                              "--json", stderr=subprocess.PIPE)  # fmt: skip
    sleeper.wait_started(proc)
    out, _err = _signal(proc, signal.SIGHUP)
    data = json.loads(out)
    assert data["status"] == "interrupted"
    ledger = json.loads((project.root / data["ledger"]).read_text())
    assert ledger["status"] == "interrupted"
    assert data["requirements"][0]["attempts"][0]["outcome"] == "interrupted"
    sleeper.assert_gone()


def test_mcp_server_ends_its_runs(repo: Repo, tmp_path: Path) -> None:
    """A background run the server started is interrupted when the server gets SIGTERM (its
    agent runs under the default isolation: found by its name, not its pid file)."""
    pytest.importorskip("mcp")
    from tests.mcp.conftest import stdio

    sleeper = Sleeper(tmp_path)
    _agent_setup(repo, sleeper, "sleeper")
    pids: dict[str, int] = {}

    async def scenario() -> None:
        async with stdio(repo.root) as client:
            started = await client.call_tool(
                "start_run", {"kind": "run", "mission_id": "m", "runtime": "sleeper"}
            )
            assert not started.is_error, started.content
            pids["runner"] = started.structured_content["pid"]  # type: ignore[index]
            stat = Path(f"/proc/{pids['runner']}/stat").read_text().rsplit(")", 1)[1].split()
            server = int(stat[1])  # the run's parent
            with anyio.fail_after(WAIT_S):
                while not live_processes_with(f"sleep 60.{sleeper.tag}"):
                    await anyio.sleep(0.05)
            os.kill(server, signal.SIGTERM)
            pids["server"] = server
            with anyio.fail_after(PROMPT_S):
                while _alive(server):
                    await anyio.sleep(0.05)

    try:
        anyio.run(scenario)
    except BaseException:  # the client may complain that its server went away
        if "server" not in pids or _alive(pids["server"]):
            raise
    assert not _alive(pids["runner"]), "the background run outlived the server"
    cancelled = [e for e in _events(repo, "m") if e.event == "runtime.cancelled"]
    assert cancelled and cancelled[0].reason == "interrupted (SIGTERM)"
    sleeper.assert_gone()


def test_a_sighup_ignored_at_start_stays_ignored(repo: Repo, tmp_path: Path) -> None:
    """Under ``nohup`` a closing terminal must not stop the command."""
    sleeper = Sleeper(tmp_path)
    repo.write(".harness/missions/quick/mission.yaml", (
        f"id: quick\nacceptance_criteria:\n  - id: q\n    timeout_s: 2\n"
        f'    check_command: "{sleeper.shell}"\n'
    ))  # fmt: skip

    def nohup() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc = repo.start("verify", "quick", stderr=subprocess.PIPE, preexec_fn=nohup)
    sleeper.wait_started(proc)
    proc.send_signal(signal.SIGHUP)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err  # ran to its end: the check's timeout
    assert "interrupted" not in err
    sleeper.assert_gone()
