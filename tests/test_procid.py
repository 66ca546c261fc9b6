"""Process identity: start time from /proc (a command name may hold ``)``), liveness, reuse."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from uh_core import procid
from uh_core.runtime import active


def _stat_field_22(pid: int) -> int:
    """Field 22 the slow, obvious way: split after the command name's closing parenthesis,
    found by its length from ``comm`` (which has no trailing ``)`` ambiguity)."""
    comm = Path(f"/proc/{pid}/comm").read_text().rstrip("\n")
    stat = Path(f"/proc/{pid}/stat").read_text()
    rest = stat[stat.index("(") + 1 + len(comm) + 1 :]
    return int(rest.split()[19])


NAMED = """\
import ctypes, sys, time
ctypes.CDLL(None).prctl(15, b"a) 1 2 (b", 0, 0, 0)  # PR_SET_NAME
print("named", flush=True)
time.sleep(30)
"""


def test_start_time_reads_after_the_last_parenthesis() -> None:
    # A command name with spaces and parentheses: the fields follow the *last* ")".
    child = subprocess.Popen([sys.executable, "-c", NAMED], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "named\n"
        assert Path(f"/proc/{child.pid}/comm").read_text() == "a) 1 2 (b\n"
        assert procid.start_time(child.pid) == _stat_field_22(child.pid)
        assert procid.parent(child.pid) == os.getpid()
        assert procid.process_state(child.pid, procid.start_time(child.pid)) == "running"
    finally:
        child.kill()
        child.wait()


def test_a_reused_pid_a_zombie_and_a_gone_pid_are_not_running() -> None:
    child = subprocess.Popen(["sleep", "30"])
    started = procid.start_time(child.pid)
    assert started is not None
    assert procid.process_state(child.pid, started) == "running"
    assert procid.process_state(child.pid, started + 1) == "gone"  # another process now
    child.kill()
    deadline = time.monotonic() + 30
    while procid.stat_fields(child.pid) and procid.stat_fields(child.pid)[0] != "Z":  # type: ignore[index]
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert procid.process_state(child.pid, started) == "gone"  # a zombie is not alive
    child.wait()
    assert procid.process_state(child.pid, started) == "gone"
    assert procid.process_state(0, None) == "gone"


def test_another_host_is_elsewhere_and_this_one_is_checked() -> None:
    me = procid.current()
    assert me.pid == os.getpid() and me.host == socket.gethostname()
    assert me.start_time == procid.start_time(os.getpid())
    assert procid.process_state(me.pid, me.start_time, me.host) == "running"
    assert procid.process_state(me.pid, me.start_time, "not-" + me.host) == "elsewhere"


def test_probe_asks_proc_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = procid.process_state

    def counting(pid: int, started: int | None, on_host: str | None = None) -> procid.State:
        calls.append(pid)
        return real(pid, started, on_host)

    monkeypatch.setattr(procid, "process_state", counting)
    probe = procid.Probe()
    me = procid.current()
    for _ in range(5):
        assert probe.state(me.pid, me.start_time, me.host) == "running"
    assert calls == [me.pid]


def test_the_registrations_share_the_helpers() -> None:
    assert active.start_time is procid.start_time
    assert active.process_state is procid.process_state


def test_cwd_environ_cmdline_and_ancestors(tmp_path: Path) -> None:
    child = subprocess.Popen(
        ["sleep", "30"], cwd=tmp_path, env={**os.environ, "UH_SANDBOX": str(tmp_path)}
    )
    try:
        # Popen returns while exec is still setting up the new image: wait for its cmdline
        deadline = time.monotonic() + 60
        while procid.cmdline(child.pid) != "sleep 30":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert procid.cwd(child.pid) == os.path.realpath(tmp_path)
        assert procid.environ(child.pid, "UH_SANDBOX") == str(tmp_path)
        assert procid.environ(child.pid, "UH_NOT_SET_ANYWHERE") is None
        assert procid.cmdline(child.pid) == "sleep 30"
        assert child.pid in procid.pids()
        assert os.getpid() in procid.ancestors(child.pid)
    finally:
        child.kill()
        child.wait()
