"""What a process under ``wrap_argv`` can and cannot do, by experiment (real bubblewrap).

Every test here skips, with bubblewrap's reason, where bubblewrap cannot run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.isolation.procs import kill_marked, new_marker, wait_until
from uh_core.isolation import bwrap_available, wrap_argv
from uh_core.proc import stop_group

PYTHON_HOME = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parent]


@dataclass
class Box:
    repo: Path  # the operator's repository: readable
    work: Path  # the agent's sandbox: writable
    sibling: Path  # next to both, listed nowhere

    def argv(self, argv: list[str]) -> list[str]:
        return wrap_argv(
            argv, writable=[self.work], readable=[self.repo, *PYTHON_HOME], cwd=self.work
        )

    def run(self, argv: list[str], **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(argv),
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        return self.run([sys.executable, "-c", textwrap.dedent(code)])


@pytest.fixture
def box(tmp_path: Path) -> Box:
    ok, reason = bwrap_available()
    if not ok:
        pytest.skip(f"bubblewrap unavailable here: {reason}")
    made = Box(tmp_path / "repo", tmp_path / "work", tmp_path / "sibling")
    for path in (made.repo, made.sibling):
        path.mkdir()
        (path / "file.txt").write_text("original\n")
    return made


def _outside_dir() -> Path | None:
    """A directory we may write outside the sandbox that is not under /tmp."""
    tmp = Path("/tmp").resolve()
    for candidate in (Path("/var/tmp"), Path.home()):
        real = candidate.resolve()
        if real.is_dir() and not real.is_relative_to(tmp) and os.access(real, os.W_OK):
            return real
    return None


PROBE = """
    import errno, json, sys
    out = {}
    for label, path in json.loads(sys.argv[1]).items():
        try:
            with open(path, "w") as handle:
                handle.write("written inside\\n")
            out[label] = "ok"
        except OSError as exc:
            out[label] = errno.errorcode.get(exc.errno, str(exc.errno))
    out["read repo"] = open(sys.argv[2]).read()
    print(json.dumps(out))
"""


def test_writes_only_where_allowed_and_tmp_is_private(box: Box) -> None:
    outside = _outside_dir()
    stray = outside / f"uh-iso-{uuid.uuid4().hex}" if outside else None
    private = Path("/tmp").resolve() / f"uh-iso-private-{uuid.uuid4().hex}"
    targets = {
        "work": str(box.work / "new.txt"),
        "repo": str(box.repo / "file.txt"),
        "repo new": str(box.repo / "new.txt"),
        "sibling": str(box.sibling / "file.txt"),
        "private tmp": str(private),
    }
    if stray:
        targets["outside"] = str(stray)
    try:
        probe = [sys.executable, "-c", textwrap.dedent(PROBE), json.dumps(targets), targets["repo"]]
        done = box.run(probe)
        assert done.returncode == 0, done.stderr
        seen = json.loads(done.stdout)
        assert seen["work"] == "ok"
        assert seen["repo"] == "EROFS" and seen["repo new"] == "EROFS"
        assert seen["read repo"] == "original\n"
        # Invisible (under the private /tmp) or read-only (when TMPDIR is elsewhere).
        assert seen["sibling"] in ("ENOENT", "EROFS")
        assert seen["private tmp"] == "ok"
        if stray:
            assert seen["outside"] == "EROFS"
            assert not stray.exists()
        assert (box.work / "new.txt").read_text() == "written inside\n"
        assert (box.repo / "file.txt").read_text() == "original\n"
        assert not (box.repo / "new.txt").exists()
        assert (box.sibling / "file.txt").read_text() == "original\n"
        assert not private.exists()  # what was written in /tmp inside is gone with it
    finally:
        for leftover in (stray, private):
            if leftover:
                with contextlib.suppress(OSError):
                    leftover.unlink()


def test_no_capabilities_so_read_only_binds_stay_read_only(box: Box) -> None:
    done = box.run(["sh", "-c", "grep '^CapEff' /proc/self/status"])
    assert done.stdout.split() == ["CapEff:", "0000000000000000"], done.stderr
    if shutil.which("mount"):
        remount = f"mount -o remount,rw,bind {box.repo} 2>/dev/null; echo x > {box.repo}/file.txt"
        assert box.run(["sh", "-c", remount]).returncode != 0
    assert (box.repo / "file.txt").read_text() == "original\n"


def test_the_environment_passes_through(box: Box) -> None:
    done = box.run(["sh", "-c", 'printf %s "$UH_ISO_PROBE"'], UH_ISO_PROBE="through")
    assert done.stdout == "through", done.stderr


def _daemons(box: Box, markers: list[str]) -> str:
    """Shell that starts one daemon per marker (setsid; double fork; TERM ignored) and
    waits until each has written its pid file."""
    first, second, third = markers
    started = box.work / "started"
    return textwrap.dedent(f"""
        mkdir -p {started}
        setsid sh -c 'echo $$ > {started}/a; exec sleep {first}' </dev/null >/dev/null 2>&1 &
        (setsid sh -c 'echo $$ > {started}/b; exec sleep {second}' </dev/null >/dev/null 2>&1 &)
        (trap '' TERM; nohup sh -c 'echo $$ > {started}/c; exec sleep {third}' </dev/null >/dev/null 2>&1 &)
        for i in $(seq 200); do [ -s {started}/a ] && [ -s {started}/b ] && [ -s {started}/c ] && break; sleep 0.05; done
    """)


def test_daemons_started_inside_die_when_the_command_exits(box: Box) -> None:
    markers = [new_marker() for _ in range(3)]
    try:
        done = box.run(["sh", "-c", _daemons(box, markers) + "exit 0\n"])
        assert done.returncode == 0, done.stderr
        assert sorted(p.name for p in (box.work / "started").iterdir()) == ["a", "b", "c"]
        # bwrap returns a few ms before its PID namespace is gone: wait, bounded.
        assert wait_until(markers, present=False, timeout=10) == []
    finally:
        kill_marked(markers)


@contextlib.contextmanager
def _running(box: Box, markers: list[str]) -> Iterator[subprocess.Popen[bytes]]:
    script = _daemons(box, markers[:3]) + f"exec sleep {markers[3]}\n"
    proc = subprocess.Popen(
        box.argv(["sh", "-c", script]),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert wait_until(markers, present=True, timeout=20) == []
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        kill_marked(markers)


def test_sigkill_of_the_bwrap_group_kills_everything_inside(box: Box) -> None:
    markers = [new_marker() for _ in range(4)]
    with _running(box, markers) as proc:
        os.killpg(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
        assert wait_until(markers, present=False, timeout=10) == []


def test_stop_group_of_the_harness_ends_everything_inside(box: Box) -> None:
    markers = [new_marker() for _ in range(4)]
    with _running(box, markers) as proc:
        assert stop_group(proc.pid, grace=5.0)
        proc.wait(timeout=30)
        assert wait_until(markers, present=False, timeout=10) == []


def test_the_network_is_shared(box: Box) -> None:
    received: list[bytes] = []
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(30)
        port = server.getsockname()[1]

        def serve() -> None:
            with contextlib.suppress(OSError):
                conn, _ = server.accept()
                with conn:
                    conn.settimeout(30)
                    received.append(conn.recv(100))
                    conn.sendall(b"pong")

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        done = box.python(f"""
            import socket
            with socket.create_connection(("127.0.0.1", {port}), timeout=30) as conn:
                conn.sendall(b"ping from the sandbox")
                print(conn.recv(100).decode())
        """)
        thread.join(timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pong"
    assert received == [b"ping from the sandbox"]
