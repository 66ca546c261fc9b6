"""The confined judge session: what a command started by its zygote can and cannot do.

Real bubblewrap, real processes; every test skips, with bubblewrap's reason, where it
cannot run."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from uh_core.errors import ProcError
from uh_core.isolation import bwrap_available
from uh_core.judge.session import ConfinedSession, SessionSpec
from uh_core.proc import run_logged

OK, WHY = bwrap_available()
pytestmark = pytest.mark.skipif(not OK, reason=f"bubblewrap cannot run here: {WHY}")
ENV = {"PATH": os.environ["PATH"], "HOME": "/tmp/home"}


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> object:
    scratch = tmp_path_factory.mktemp("scratch")
    with ConfinedSession(SessionSpec(scratch=scratch)) as opened:
        yield opened


def run(session: ConfinedSession, command: str, tmp_path: Path, timeout: float = 30) -> object:
    return run_logged(
        command, cwd=session.spec.scratch, stdout_log=tmp_path / "out.log",
        stderr_log=tmp_path / "err.log", env=ENV, env_is_complete=True, timeout=timeout,
        launcher=session.spawn, lazy_logs=True, grace=0.5,
    )  # fmt: skip


def test_commands_run_with_their_exit_codes_and_output(
    session: ConfinedSession, tmp_path: Path
) -> None:
    done = run(session, "echo hello; echo oops >&2; exit 3", tmp_path)
    assert done.exit_code == 3
    assert done.stdout_snippet == "hello\n" and done.stderr_snippet == "oops\n"
    assert run(session, "true", tmp_path).exit_code == 0
    missing = run(session, "no-such-command-here", tmp_path)
    assert missing.exit_code == 127


def test_the_machine_is_read_only_and_tmp_and_home_private(
    session: ConfinedSession, tmp_path: Path
) -> None:
    marker = tmp_path / "written-from-inside"
    done = run(session, f"touch {marker}; touch /etc/uh-x; echo $HOME; touch ok", tmp_path)
    assert not marker.exists() and not Path("/etc/uh-x").exists()
    assert done.stdout_snippet.strip() == "/tmp/home"
    assert (session.spec.scratch / "ok").exists()  # the scratch checkout is writable


def test_no_network_to_the_hosts_loopback(session: ConfinedSession, tmp_path: Path) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5)
    port = listener.getsockname()[1]
    got: list[bytes] = []

    def accept() -> None:
        try:
            conn, _ = listener.accept()
            got.append(conn.recv(100))
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    code = f"import socket; socket.create_connection(('127.0.0.1', {port}), 2).sendall(b'key')"
    done = run(session, f'python3 -c "{code}"', tmp_path)
    listener.close()
    thread.join(6)
    assert done.exit_code != 0 and got == []


def test_what_a_command_leaves_running_is_killed_and_named(
    session: ConfinedSession, tmp_path: Path
) -> None:
    before = len(session.survivors)
    # a duration no other test's sleep has: other tests sleep 300 too, at the same time
    mine = f"sleep 300.{os.getpid()}{time.monotonic_ns() % 10**6:06d}"
    run(session, f"setsid sh -c 'trap \"\" TERM HUP INT; {mine}' & sleep 0.2; echo left", tmp_path)
    named = session.survivors[before:]
    assert named and any(mine in s.argv for s in named)
    # nothing of it is left on this machine
    alive = [p for p in os.listdir("/proc") if p.isdigit() and _argv(p) == mine]
    assert alive == []


def test_a_timeout_stops_the_command(session: ConfinedSession, tmp_path: Path) -> None:
    done = run(session, "trap '' TERM; sleep 300", tmp_path, timeout=0.5)
    assert done.timed_out and done.exit_code is None


def test_one_command_at_a_time(tmp_path: Path) -> None:
    with ConfinedSession(SessionSpec(scratch=tmp_path)) as opened:
        out = os.open(os.devnull, os.O_WRONLY)
        try:
            opened.spawn(
                ["/bin/sleep", "5"], cwd=tmp_path, env=ENV, stdin_file=None, stdout=out, stderr=out
            )
            with pytest.raises(ProcError, match="one command at a time"):
                opened.spawn(
                    ["/bin/true"], cwd=tmp_path, env=ENV, stdin_file=None, stdout=out, stderr=out
                )
        finally:
            os.close(out)
    with pytest.raises(ProcError, match="closed"):
        opened.spawn(["/bin/true"], cwd=tmp_path, env=ENV, stdin_file=None, stdout=1, stderr=2)


def test_the_operators_credentials_are_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_ed25519").write_text("PRIVATE")
    (home / ".codex").mkdir()
    (home / ".codex/auth.json").write_text("AGENT-KEY")
    (home / ".netrc").write_text("machine x password y")
    monkeypatch.setenv("HOME", str(home))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with ConfinedSession(SessionSpec(scratch=scratch, readable=[home])) as opened:
        done = run(
            opened, f"cat {home}/.ssh/id_ed25519 {home}/.codex/auth.json {home}/.netrc", tmp_path
        )
    assert "PRIVATE" not in done.stdout_snippet and "AGENT-KEY" not in done.stdout_snippet
    assert "password" not in done.stdout_snippet


def _argv(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return ""
