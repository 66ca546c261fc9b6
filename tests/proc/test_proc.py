"""The one subprocess helper, exercised with real processes, process groups and files."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests import fds
from tests.conftest import interruptible
from uh_core.errors import ProcError
from uh_core.proc import ProcResult, run_capture, run_logged, snippet, stop_group
from uh_core.proc import spawn as spawn_mod
from uh_core.proc.interrupts import raise_interrupt


def _marker() -> str:
    """A sleep duration no other process on the machine uses: a unique command-line tag."""
    return f"300.{secrets.randbelow(10**9):09d}"


def _processes() -> list[tuple[int, str, int, str]]:
    """(pid, state, pgid, command line) of every process, read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue  # gone while we looked
        found.append((int(entry), fields[0].decode(), int(fields[2]), cmdline))
    return found


def _live(*, marker: str | None = None, pgid: int | None = None) -> list[tuple[int, str, str]]:
    """Processes (not zombies) whose command line holds ``marker`` or whose group is ``pgid``."""
    return [
        (pid, state, cmd)
        for pid, state, group, cmd in _processes()
        if state != "Z" and ((marker is not None and marker in cmd) or group == pgid)
    ]


def _wait_gone(marker: str, pgid: int | None, within: float = 1.0) -> list[tuple[int, str, str]]:
    """SIGKILL takes effect asynchronously: give the kernel a moment before judging."""
    deadline = time.monotonic() + within
    left = _live(marker=marker, pgid=pgid)
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = _live(marker=marker, pgid=pgid)
    return left


LAZY = pytest.mark.parametrize("lazy", [False, True], ids=["files", "lazy-logs"])


@pytest.fixture(autouse=True, params=["popen", "posix-spawn", "fork-exec"])
def spawn_way(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every test runs each way a command can start: ``fork_exec`` (where this Python's is
    known) or else ``posix_spawn`` is used when the command's cwd is this process's, so
    those ways run from inside ``tmp_path``."""
    monkeypatch = request.getfixturevalue("monkeypatch")
    if request.param == "fork-exec" and not spawn_mod._FORK_EXEC[0]:
        pytest.skip("_posixsubprocess.fork_exec is not used on this Python")
    if request.param == "posix-spawn":
        monkeypatch.setattr(spawn_mod, "_FORK_EXEC", [False])
    if request.param != "popen":
        monkeypatch.chdir(tmp_path)
    return str(request.param)


def _run(tmp_path: Path, command: str | list[str], **kwargs: object) -> ProcResult:
    return run_logged(
        command,
        cwd=tmp_path,
        stdout_log=tmp_path / "logs" / "out.log",
        stderr_log=tmp_path / "logs" / "err.log",
        **kwargs,  # type: ignore[arg-type]
    )


# --- exit codes, output, environment ------------------------------------------------------


@LAZY
@pytest.mark.parametrize(("command", "code"), [("true", 0), ("false", 1), ("exit 3", 3)])
def test_exit_codes(tmp_path: Path, command: str, code: int, lazy: bool) -> None:
    result = _run(tmp_path, command, lazy_logs=lazy)
    assert (result.exit_code, result.signal, result.timed_out) == (code, None, False)
    assert result.duration_ms >= 0


@LAZY
def test_killed_by_a_signal_has_no_exit_code(tmp_path: Path, lazy: bool) -> None:
    result = _run(tmp_path, "kill -USR1 $$", lazy_logs=lazy)
    assert (result.exit_code, result.signal, result.timed_out) == (None, signal.SIGUSR1, False)


@LAZY
def test_argv_runs_without_a_shell_and_output_goes_to_the_logs(tmp_path: Path, lazy: bool) -> None:
    script = "import sys; print('to out'); print('to err', file=sys.stderr); sys.exit(5)"
    result = _run(tmp_path, [sys.executable, "-c", script], lazy_logs=lazy)
    assert result.exit_code == 5
    assert result.stdout_log.read_text() == "to out\n" == result.stdout_snippet
    assert result.stderr_log.read_text() == "to err\n" == result.stderr_snippet
    assert (result.stdout_bytes, result.stderr_bytes) == (7, 7)
    assert (result.stdout_file, result.stderr_file) == (result.stdout_log, result.stderr_log)


@LAZY
def test_log_files_are_truncated_for_each_run(tmp_path: Path, lazy: bool) -> None:
    _run(tmp_path, "yes | head -c 10000", lazy_logs=lazy)
    result = _run(tmp_path, "printf short", lazy_logs=lazy)
    assert result.stdout_log.read_bytes() == b"short" and result.stdout_bytes == 5


def test_without_lazy_logs_silent_streams_still_get_empty_files(tmp_path: Path) -> None:
    result = _run(tmp_path, "true")
    assert result.stdout_log.read_bytes() == b"" == result.stderr_log.read_bytes()
    assert (result.stdout_file, result.stderr_file) == (result.stdout_log, result.stderr_log)


# --- lazy logs: pipes drained into files made on the first byte ----------------------------


def test_lazy_logs_make_no_file_for_a_silent_stream(tmp_path: Path) -> None:
    result = _run(tmp_path, "true", lazy_logs=True)
    assert result.exit_code == 0
    assert (result.stdout_bytes, result.stderr_bytes) == (0, 0)
    assert (result.stdout_snippet, result.stderr_snippet) == ("", "")
    assert (result.stdout_file, result.stderr_file) == (None, None)
    assert not result.stdout_log.exists() and not result.stderr_log.exists()
    # One stream printing: only its file exists.
    result = _run(tmp_path, "echo oops >&2; exit 2", lazy_logs=True)
    assert (result.stdout_file, result.stderr_file) == (None, result.stderr_log)
    assert result.stderr_log.read_text() == "oops\n" == result.stderr_snippet
    assert not result.stdout_log.exists()


def test_lazy_logs_remove_an_older_log_of_the_same_name(tmp_path: Path) -> None:
    _run(tmp_path, "echo old; echo old >&2", lazy_logs=True)
    result = _run(tmp_path, "echo new", lazy_logs=True)
    assert result.stdout_log.read_text() == "new\n"
    assert result.stderr_file is None and not result.stderr_log.exists()


def test_lazy_logs_output_that_outgrows_a_pipe_is_kept_whole(tmp_path: Path) -> None:
    # Both streams at once, each far beyond a pipe's 64 KiB: neither may block the other.
    command = "seq 1 200000; seq 1 200000 >&2; printf END"
    result = _run(tmp_path, command, lazy_logs=True, timeout=60)
    expected = "".join(f"{n}\n" for n in range(1, 200001))
    assert result.stdout_log.read_text() == expected + "END"
    assert result.stderr_log.read_text() == expected
    assert result.stdout_bytes == len(expected) + 3 and result.stderr_bytes == len(expected)
    assert result.stdout_snippet.endswith("199999\n200000\nEND")


def test_lazy_logs_leave_no_descriptor_open(tmp_path: Path) -> None:
    """The pipes' write ends are held until the leader exits (so a short command wakes us
    once): every one is closed after a silent run, a chatty one, a timeout and a failed
    start alike."""
    before = fds.snapshot()
    _run(tmp_path, "true", lazy_logs=True)
    _run(tmp_path, "seq 1 100000; echo err >&2", lazy_logs=True, timeout=60)
    assert _run(tmp_path, "sleep 30", lazy_logs=True, timeout=0.2, grace=0.5).timed_out
    with pytest.raises(ProcError):
        _run(tmp_path, ["/nonexistent/uh-no-such-binary"], lazy_logs=True)
    assert fds.left_open(before, kinds=(*fds.OURS, str(tmp_path))) == {}


def test_lazy_logs_without_splice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system that cannot splice: the data is copied instead, nothing lost."""

    def refuse(*args: object, **kwargs: object) -> int:
        raise OSError(errno.EINVAL, "splice not supported")

    monkeypatch.setattr(os, "splice", refuse)
    result = _run(tmp_path, "seq 1 50000", lazy_logs=True, timeout=60)
    assert result.stdout_log.read_text() == "".join(f"{n}\n" for n in range(1, 50001))


def test_lazy_logs_without_pidfd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel without pidfd_open: the leader's exit is noticed by looking, not waking."""

    def refuse(pid: int) -> int:
        raise OSError(errno.ENOSYS, "no pidfd")

    monkeypatch.setattr(os, "pidfd_open", refuse)
    result = _run(tmp_path, "echo out; echo err >&2; exit 4", lazy_logs=True, timeout=30)
    assert (result.exit_code, result.stdout_snippet, result.stderr_snippet) == (4, "out\n", "err\n")
    marker = _marker()
    began = time.monotonic()
    result = _run(tmp_path, f"sleep {marker}", lazy_logs=True, timeout=0.3, grace=0.5)
    assert result.timed_out and time.monotonic() - began < 3
    assert _wait_gone(marker, None) == []


def test_lazy_logs_unwritable_log_is_a_proc_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    marker = _marker()
    started: list[int] = []
    with pytest.raises(ProcError, match="cannot write"):
        run_logged(
            f"echo hi; sleep {marker} & wait",
            cwd=tmp_path,
            stdout_log=blocker / "out.log",
            stderr_log=tmp_path / "err.log",
            lazy_logs=True,
            timeout=30,
            on_start=started.append,
        )
    assert _wait_gone(marker, started[0]) == []
    # Nothing printed, nothing to write: no error.
    result = run_logged(
        "true", cwd=tmp_path, stdout_log=blocker / "o", stderr_log=blocker / "e", lazy_logs=True
    )
    assert result.exit_code == 0


def test_lazy_logs_drain_while_a_dying_check_prints(tmp_path: Path) -> None:
    """On SIGTERM the check prints more than a pipe holds before it exits: the pipe is
    drained during the grace, so it exits by itself instead of blocking until SIGKILL."""
    command = "trap 'seq 1 100000; exit 7' TERM; echo up; while :; do sleep 0.05; done"
    began = time.monotonic()
    result = _run(tmp_path, command, lazy_logs=True, timeout=0.5, grace=20)
    assert time.monotonic() - began < 10
    assert result.timed_out and result.exit_code == 7
    text = result.stdout_log.read_text()
    assert text.startswith("up\n1\n") and text.endswith("\n100000\n")


def test_lazy_logs_a_process_that_left_the_session_cannot_keep_us_waiting(
    tmp_path: Path,
) -> None:
    """It holds the pipes but is in a session of its own, out of the group's reach: the
    run still ends when the command does, and the escaped process is not our evidence."""
    marker = _marker()
    escape = f"{sys.executable} -c 'import os, time; os.setsid(); time.sleep({marker})'"
    began = time.monotonic()
    result = _run(tmp_path, f"{escape} & echo done", lazy_logs=True, timeout=30, grace=0.5)
    try:
        assert time.monotonic() - began < 5
        assert (result.exit_code, result.timed_out, result.stdout_snippet) == (0, False, "done\n")
    finally:
        for pid, _, _ in _live(marker=marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_cwd_env_stdin_and_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UH_TEST_INHERITED", "from-parent")
    started: list[int] = []
    command = (
        'echo "$PWD|$UH_TEST_GIVEN|$UH_TEST_INHERITED|$UH_TEST_OVERRIDDEN"; '
        "cat; "  # stdin is /dev/null: returns at once
        'echo "$$ $(cat /proc/$$/stat)"'
    )
    monkeypatch.setenv("UH_TEST_OVERRIDDEN", "old")
    result = _run(
        tmp_path,
        command,
        env={"UH_TEST_GIVEN": "given", "UH_TEST_OVERRIDDEN": "new"},
        on_start=started.append,
        timeout=10,
    )
    assert result.exit_code == 0, result.stderr_snippet
    first, ids = result.stdout_snippet.splitlines()
    assert first == f"{tmp_path}|given|from-parent|new"
    pid = int(ids.split()[0])
    fields = ids.rsplit(")", 1)[1].split()  # state, ppid, pgrp, session, ...
    pgid, sid = int(fields[2]), int(fields[3])
    assert started == [pid]
    assert pid == pgid == sid  # its own session and process group
    assert sid != os.getsid(0)


def test_missing_binary_or_cwd_raises_proc_error(tmp_path: Path) -> None:
    with pytest.raises(ProcError, match="cannot start"):
        _run(tmp_path, ["/nonexistent/uh-no-such-binary", "--flag"])
    with pytest.raises(ProcError):
        run_logged(
            "true",
            cwd=tmp_path / "no-such-dir",
            stdout_log=tmp_path / "o.log",
            stderr_log=tmp_path / "e.log",
        )
    with pytest.raises(ProcError, match="uh-no-such-binary"):
        run_capture(["uh-no-such-binary"], cwd=tmp_path)
    # Through a shell, a missing command is an ordinary failure (127), not an error of ours.
    assert _run(tmp_path, "uh-no-such-binary").exit_code == 127


# --- snippets -----------------------------------------------------------------------------


@LAZY
def test_small_output_is_kept_whole(tmp_path: Path, lazy: bool) -> None:
    result = _run(tmp_path, "printf 'a%.0s' $(seq 200)", snippet_bytes=100, lazy_logs=lazy)
    assert result.stdout_snippet == "a" * 200 and result.stdout_bytes == 200


@LAZY
def test_snippets_keep_head_and_tail_with_a_marker(tmp_path: Path, lazy: bool) -> None:
    command = "printf 'HEAD'; head -c 10000 /dev/zero | tr '\\0' m; printf 'TAIL' >&1; echo err >&2"
    result = _run(tmp_path, command, snippet_bytes=100, lazy_logs=lazy)
    size = 4 + 10000 + 4
    assert result.stdout_bytes == size == result.stdout_log.stat().st_size
    head, rest = result.stdout_snippet.split("\n… [", 1)
    marker, tail = rest.split("] …\n", 1)
    assert head == "HEAD" + "m" * 96
    assert tail == "m" * 96 + "TAIL"
    assert marker == f"{size - 200} bytes omitted"
    assert result.stderr_snippet == "err\n"


@LAZY
def test_invalid_utf8_never_crashes(tmp_path: Path, lazy: bool) -> None:
    # Invalid bytes, a lone surrogate encoding, NULs and a multi-byte char cut by the limit.
    command = "printf '\\377\\376ok\\355\\240\\200\\000'; printf 'é%.0s' $(seq 100); printf '\\303'"
    result = _run(tmp_path, command, snippet_bytes=51, lazy_logs=lazy)
    assert result.exit_code == 0
    assert "\ufffd" in result.stdout_snippet
    assert result.stdout_snippet.startswith("\ufffd\ufffdok")
    assert "bytes omitted" in result.stdout_snippet
    result.stdout_snippet.encode("utf-8")  # a valid str: no surrogates smuggled through
    whole = _run(tmp_path, "printf 'x\\377y' >&2", snippet_bytes=51, lazy_logs=lazy)
    assert whole.stderr_snippet == "x\ufffdy"


def test_snippet_of_a_missing_log() -> None:
    assert snippet(Path("/nonexistent/uh.log")) == ("", 0)


# --- timeouts and leftovers ---------------------------------------------------------------


@LAZY
def test_timeout_with_an_orphaned_grandchild_holding_stdout(tmp_path: Path, lazy: bool) -> None:
    marker = _marker()
    # The background subshell keeps stdout open and outlives its parent's death.
    command = f"( sleep {marker}; echo never ) & echo started; sleep {marker}"
    started: list[int] = []
    began = time.monotonic()
    result = _run(
        tmp_path, command, timeout=0.5, grace=2.0, on_start=started.append, lazy_logs=lazy
    )
    elapsed = time.monotonic() - began
    assert result.timed_out
    assert result.exit_code is None and result.signal == signal.SIGTERM
    assert elapsed < 2.0, f"took {elapsed:.2f}s"  # well under the 300 s sleep, and the grace
    assert result.stdout_snippet == "started\n"
    assert _wait_gone(marker, started[0]) == [], "a process of the check survived"


@LAZY
def test_leftover_background_process_is_stopped_when_the_leader_exits(
    tmp_path: Path, lazy: bool
) -> None:
    marker = _marker()
    started: list[int] = []
    began = time.monotonic()
    result = _run(
        tmp_path, f"sleep {marker} & echo bye", timeout=60, on_start=started.append, lazy_logs=lazy
    )
    assert (result.exit_code, result.timed_out) == (0, False)
    assert time.monotonic() - began < 2.0
    assert result.stdout_snippet == "bye\n"
    assert _wait_gone(marker, started[0]) == []


@LAZY
def test_check_ignoring_sigterm_is_killed_after_the_grace(tmp_path: Path, lazy: bool) -> None:
    marker = _marker()
    started: list[int] = []
    # Both the shell and its child ignore SIGTERM.
    command = f"trap '' TERM; echo up; sleep {marker} & sleep {marker}; echo unreachable"
    began = time.monotonic()
    result = _run(
        tmp_path, command, timeout=0.3, grace=0.7, on_start=started.append, lazy_logs=lazy
    )
    elapsed = time.monotonic() - began
    assert result.timed_out
    assert result.signal == signal.SIGKILL and result.exit_code is None
    assert 0.9 <= elapsed < 3.0, f"took {elapsed:.2f}s"  # timeout + grace, then no waiting
    assert result.stdout_log.read_text() == "up\n" == result.stdout_snippet
    assert _wait_gone(marker, started[0]) == []


@LAZY
def test_ctrl_c_during_the_grace_kills_at_once_and_closes_everything(
    tmp_path: Path, lazy: bool
) -> None:
    """A second Ctrl-C while a check that ignores SIGTERM is being stopped: no more grace,
    the group is killed, no descriptor stays open."""
    marker = _marker()
    started: list[int] = []
    command = f"trap '' TERM; sleep {marker} & sleep {marker}"
    before = fds.snapshot()

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.8)  # 0.3 s timeout, then 0.5 s into a 30 s grace
    began = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            _run(tmp_path, command, timeout=0.3, grace=30, on_start=started.append, lazy_logs=lazy)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - began < 5
    assert _wait_gone(marker, started[0]) == []
    assert fds.left_open(before, kinds=(*fds.OURS, str(tmp_path))) == {}


@LAZY
@pytest.mark.parametrize("where", ["making its object", "as start returns"])
def test_a_ctrl_c_between_the_spawn_and_its_object_leaves_nothing_running(
    tmp_path: Path, lazy: bool, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded machine the command runs before the object that would stop it exists,
    and a Ctrl-C (or a SIGTERM made one) can land in that gap: what was spawned is stopped."""
    import uh_core.proc.start as start_mod

    marker = _marker()
    spawned: list[int] = []
    real_start = start_mod.Prepared.start

    def logged(proc, *args, **kwargs):  # type: ignore[no-untyped-def]
        spawned.append(proc.pid)
        _wait_running(marker)
        raise KeyboardInterrupt

    def start(self):  # type: ignore[no-untyped-def]
        process = real_start(self)
        spawned.append(process.pid)
        _wait_running(marker)
        raise KeyboardInterrupt

    if where == "making its object":
        monkeypatch.setattr(start_mod, "LoggedProcess", logged)
    else:
        monkeypatch.setattr(start_mod.Prepared, "start", start)
    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, f"sleep {marker}", timeout=60, lazy_logs=lazy)
    assert _wait_gone(marker, spawned[0], within=5) == []


@LAZY
def test_a_signal_inside_the_spawn_is_held_until_the_command_has_an_owner(
    tmp_path: Path, lazy: bool
) -> None:
    """The CLI's SIGTERM arriving while the spawn is still returning (the check already
    running, the parent not yet holding its pid: the flake of tests/cli/test_signals.py on
    a loaded machine) is raised once the command has an object, which stops it."""
    marker = _marker()
    spawned: list[int] = []

    def launcher(argv: list[str], **kwargs: Any) -> Any:
        child = spawn_mod.spawn(argv, **kwargs)
        spawned.append(child.pid)
        _wait_running(marker)
        os.kill(os.getpid(), signal.SIGTERM)  # its handler runs as this call returns
        return child

    previous = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            _run(tmp_path, f"sleep {marker}", timeout=60, lazy_logs=lazy, launcher=launcher)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert _wait_gone(marker, spawned[0], within=5) == []


def _wait_running(marker: str) -> None:
    deadline = time.monotonic() + 10
    while not _live(marker=marker, pgid=None) and time.monotonic() < deadline:
        time.sleep(0.01)


@LAZY
def test_a_failing_on_start_callback_stops_the_command(tmp_path: Path, lazy: bool) -> None:
    marker = _marker()
    started: list[int] = []

    def fail(pid: int) -> None:
        started.append(pid)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _run(tmp_path, f"sleep {marker}", timeout=60, on_start=fail, grace=0.5, lazy_logs=lazy)
    assert _wait_gone(marker, started[0]) == []


def test_stop_group_does_not_count_zombies_as_alive() -> None:
    proc = subprocess.Popen(["true"], start_new_session=True)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:  # not reaped: a zombie in its own group
        state = Path(f"/proc/{proc.pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        if state == b"Z":
            break
        time.sleep(0.01)
    began = time.monotonic()
    assert stop_group(proc.pid, grace=5.0) is False  # nothing alive: no signal, no waiting
    assert time.monotonic() - began < 1.0
    assert proc.wait() == 0


def test_a_signal_every_member_ignores_is_not_waited_out() -> None:
    """A background job of a non-interactive shell ignores SIGINT: a cancel (SIGINT, then
    SIGTERM) goes on to SIGTERM at once instead of holding the whole grace."""
    proc = subprocess.Popen(["sh", "-c", "trap '' INT; sleep 60 & wait"], start_new_session=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not _ignores_sigint(_children(proc.pid)):
        time.sleep(0.01)  # the shell has started its background job
    began = time.monotonic()
    assert stop_group(proc.pid, grace=30.0, signals=(signal.SIGINT, signal.SIGTERM)) is True
    assert time.monotonic() - began < 15  # not the 30 s grace
    assert proc.wait(timeout=10) == -signal.SIGTERM


def test_a_member_that_handles_the_signal_gets_its_grace(tmp_path: Path) -> None:
    saved, ready = tmp_path / "saved", tmp_path / "ready"
    script = f"trap 'sleep 0.5; echo yes > {saved}; exit 3' INT; : > {ready}; while :; do sleep 0.1; done"
    # interruptible: under a background job SIGINT comes ignored, and a shell cannot trap a
    # signal ignored on entry
    proc = subprocess.Popen(["sh", "-c", script], start_new_session=True, preexec_fn=interruptible)
    deadline = time.monotonic() + 10
    while not ready.exists() and time.monotonic() < deadline:  # the trap is set
        time.sleep(0.01)
    assert stop_group(proc.pid, grace=30.0, signals=(signal.SIGINT, signal.SIGTERM)) is True
    assert proc.wait(timeout=10) == 3 and saved.read_text() == "yes\n"


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _ignores_sigint(pids: list[int]) -> bool:
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return False
        mask = next(line for line in status.splitlines() if line.startswith("SigIgn:"))
        if not int(mask.split()[1], 16) & (1 << (signal.SIGINT - 1)):
            return False
    return bool(pids)


def test_stop_group_on_a_vanished_group() -> None:
    proc = subprocess.Popen(["true"], start_new_session=True)
    proc.wait()
    assert stop_group(proc.pid, grace=5.0) is False


# --- any amount of output -----------------------------------------------------------------

FLOOD = 1_000_000_000

# Runs in its own interpreter so its peak RSS is the harness's alone.
FLOOD_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from uh_core.proc import run_logged

    def vm_hwm_kb():
        status = Path("/proc/self/status").read_text()
        return int(next(x for x in status.splitlines() if x.startswith("VmHWM:")).split()[1])

    tmp = Path(sys.argv[1])
    before_kb = vm_hwm_kb()
    result = run_logged(
        "printf BEGIN; head -c {flood} /dev/zero; printf END; yes err | head -c 3000000 >&2",
        cwd=tmp, stdout_log=tmp / "flood.out", stderr_log=tmp / "flood.err", timeout=120,
        lazy_logs=sys.argv[2] == "lazy",
    )
    print(json.dumps({{
        "exit_code": result.exit_code,
        "stdout_bytes": result.stdout_bytes,
        "stderr_bytes": result.stderr_bytes,
        "stdout_snippet": result.stdout_snippet,
        "stderr_snippet_len": len(result.stderr_snippet),
        "vm_hwm_before_kb": before_kb,
        "vm_hwm_kb": vm_hwm_kb(),
    }}))
    """
).format(flood=FLOOD)


@pytest.mark.slow
@LAZY
def test_one_gigabyte_flood_keeps_memory_flat(tmp_path: Path, lazy: bool) -> None:
    try:
        proc = subprocess.run(
            [sys.executable, "-c", FLOOD_SCRIPT, str(tmp_path), "lazy" if lazy else "files"],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)
        assert report["exit_code"] == 0
        assert report["stdout_bytes"] == FLOOD + 8
        assert (tmp_path / "flood.out").stat().st_size == FLOOD + 8
        assert report["stderr_bytes"] == 3_000_000 == (tmp_path / "flood.err").stat().st_size
        text = report["stdout_snippet"]
        assert text.startswith("BEGIN\0") and text.endswith("\0END")
        assert f"[{FLOOD + 8 - 2 * 4096} bytes omitted]" in text
        assert len(text) < 2 * 4096 + 100 and report["stderr_snippet_len"] < 2 * 4096 + 100
        # VmHWM is this interpreter's own peak. (ru_maxrss would not do: at exec the kernel
        # folds in the peak of the memory image it replaces, here pytest's forked image.)
        peak_mb = report["vm_hwm_kb"] / 1024
        grown_mb = (report["vm_hwm_kb"] - report["vm_hwm_before_kb"]) / 1024
        assert peak_mb < 100, f"peak RSS {peak_mb:.1f} MB"
        assert grown_mb < 20, f"peak RSS grew {grown_mb:.1f} MB while the flood ran"
    finally:
        for name in ("flood.out", "flood.err"):
            (tmp_path / name).unlink(missing_ok=True)


# --- run_capture ---------------------------------------------------------------------------


def test_run_capture_basics(tmp_path: Path) -> None:
    captured = run_capture(
        ["sh", "-c", 'echo "$PWD $UH_TEST_VAR"; cat; echo oops >&2; exit 4'],
        cwd=tmp_path,
        env={"UH_TEST_VAR": "v"},
        stdin=b"from stdin\n",
    )
    assert captured.returncode == 4
    assert captured.stdout == f"{tmp_path} v\nfrom stdin\n".encode()
    assert captured.stderr == b"oops\n"
    assert captured.timed_out is False
    # Without stdin the command reads /dev/null rather than waiting.
    assert run_capture(["cat"], cwd=tmp_path, timeout=10).stdout == b""


def test_run_capture_timeout(tmp_path: Path) -> None:
    marker = _marker()
    began = time.monotonic()
    captured = run_capture(
        ["sh", "-c", f"echo partial; sleep {marker}"], cwd=tmp_path, timeout=0.5, grace=1.0
    )
    assert time.monotonic() - began < 2.0
    assert captured.timed_out and captured.returncode < 0
    assert captured.stdout == b"partial\n"
    assert _wait_gone(marker, None) == []


def test_run_capture_returns_when_the_leader_exits_despite_a_grandchild(tmp_path: Path) -> None:
    """A background process holding the pipes must not make a finished command time out."""
    marker = _marker()
    began = time.monotonic()
    captured = run_capture(["sh", "-c", f"sleep {marker} & echo hi"], cwd=tmp_path, timeout=30)
    assert time.monotonic() - began < 3.0
    assert (captured.returncode, captured.stdout, captured.timed_out) == (0, b"hi\n", False)
    assert _wait_gone(marker, None) == []


def test_run_capture_feeds_large_stdin_across_polls(tmp_path: Path) -> None:
    """Input larger than a pipe, to a reader that starts late: nothing lost or repeated."""
    data = bytes(range(256)) * 8192  # 2 MB
    captured = run_capture(["sh", "-c", "sleep 0.3; cat"], cwd=tmp_path, stdin=data, timeout=30)
    assert captured.returncode == 0 and not captured.timed_out
    assert captured.stdout == data


def test_a_command_starts_with_sigint_and_sigquit_at_their_default_even_if_uh_ignores_them(
    tmp_path: Path,
) -> None:
    # uh started as a background job inherits SIGINT ignored; the agents it starts must not
    # (claude, codex and omp are cancelled with SIGINT first, and a shell cannot trap it back).
    script = (
        "import signal, sys\n"
        "from pathlib import Path\n"
        "from uh_core.proc import run_capture\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "signal.signal(signal.SIGQUIT, signal.SIG_IGN)\n"
        "from uh_core.proc import run_logged\n"
        "logs = Path.cwd() / 'logs'\n"
        "for program in ('/bin/sh', 'sh'):  # posix_spawn and Popen\n"
        "    r = run_capture([program, '-c', 'grep SigIgn /proc/self/status'], cwd=Path('/'))\n"
        "    print(r.stdout.decode().split()[1])\n"
        "    for cwd in (Path.cwd(), Path('/')):\n"
        "        run_logged([program, '-c', 'grep SigIgn /proc/self/status'], cwd=cwd,\n"
        "                   stdout_log=logs / 'out', stderr_log=logs / 'err')\n"
        "        print((logs / 'out').read_text().split()[1])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path
    ).stdout.split()
    assert len(out) == 6
    for mask in out:
        ignored = int(mask, 16)
        assert not ignored & (1 << (signal.SIGINT - 1)), mask
        assert not ignored & (1 << (signal.SIGQUIT - 1)), mask
