"""The one subprocess helper: every command the engine runs goes through here.

Each command gets its own session (so its whole process group can be signalled), its
output goes straight to log files (memory stays flat whatever it prints; only bounded
head/tail snippets are read back), and a timeout signals the whole group with SIGTERM,
waits a grace period, then sends SIGKILL. When the command ends, anything it left
running in its group is stopped the same way: no orphan survives a run.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from uh_core.errors import ProcError

DEFAULT_GRACE_S = 2.0
SNIPPET_BYTES = 4096
_MAX_POLL_MS = 60_000  # one poll() call at most; longer timeouts loop


@dataclass(frozen=True)
class ProcResult:
    exit_code: int | None  # None when killed by a signal
    signal: int | None
    timed_out: bool
    duration_ms: int
    stdout_log: Path
    stderr_log: Path
    stdout_snippet: str
    stderr_snippet: str
    stdout_bytes: int
    stderr_bytes: int


@dataclass(frozen=True)
class Captured:
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False


def snippet(path: Path, limit: int = SNIPPET_BYTES) -> tuple[str, int]:
    """Head and tail of a log (``limit`` bytes each) with a marker of what was cut."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as handle:
            if size <= 2 * limit:
                return handle.read().decode("utf-8", errors="replace"), size
            head = handle.read(limit)
            handle.seek(size - limit)
            tail = handle.read(limit)
    except FileNotFoundError:
        return "", 0
    omitted = size - 2 * limit
    text = (
        head.decode("utf-8", errors="replace")
        + f"\n… [{omitted} bytes omitted] …\n"
        + tail.decode("utf-8", errors="replace")
    )
    return text, size


def _group_has_live_members(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Members may be zombies waiting for a reaper that is not us; those are harmless.
    try:
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as handle:
                    fields = handle.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != b"Z":
                return True
    except OSError:
        return True
    return False


def stop_group(
    pgid: int,
    grace: float = DEFAULT_GRACE_S,
    signals: Sequence[signal.Signals] = (signal.SIGTERM,),
) -> bool:
    """Send each of ``signals`` to the group, waiting ``grace`` after each, then SIGKILL.

    True if anything was alive. Agents that save partial state on SIGINT get
    ``signals=(SIGINT, SIGTERM)``.
    """
    if not _group_has_live_members(pgid):
        return False
    for sig in signals:
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not _group_has_live_members(pgid):
                return True
            time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    return True


def full_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """This process's environment with ``env`` on top (compute once, reuse for many runs)."""
    merged = dict(os.environ)
    if env:
        merged.update(env)
    return merged


def _exited_within(proc: subprocess.Popen[bytes], timeout: float | None) -> bool:
    """Wait for the leader to exit (without reaping it); False if ``timeout`` passed first.

    ``Popen.wait(timeout=...)`` polls with growing sleeps, which adds up to a millisecond or
    more to every short command; a pidfd wakes us the moment the process exits.
    """
    if timeout is None:
        proc.wait()
        return True
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if poller.poll(min(math.ceil(remaining * 1000), _MAX_POLL_MS)):
                return True
    finally:
        os.close(pidfd)


def _open_log(path: Path) -> BinaryIO:
    try:
        return open(path, "wb")  # the caller's with closes it
    except FileNotFoundError:  # its folder does not exist yet
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "wb")


class LoggedProcess:
    """A command started by ``start_logged``: its own session, output in two log files."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        stdout_log: Path,
        stderr_log: Path,
        *,
        started: float,
        grace: float,
        snippet_bytes: int,
    ) -> None:
        self.proc = proc
        self.pid = proc.pid
        self.stdout_log = stdout_log
        self.stderr_log = stderr_log
        self.started = started
        self.grace = grace
        self.snippet_bytes = snippet_bytes
        self.timed_out = False
        self._result: ProcResult | None = None

    def running(self) -> bool:
        return self._result is None and self.proc.poll() is None

    def wait(self, timeout: float | None = None) -> ProcResult | None:
        """The result once the leader exits (leftovers stopped); None if still running."""
        if self._result is not None:
            return self._result
        try:
            if not _exited_within(self.proc, timeout):
                return None
        except BaseException:
            self.stop()
            raise
        return self._finish()

    def stop(
        self, signals: Sequence[signal.Signals] = (signal.SIGTERM,), *, timed_out: bool = False
    ) -> ProcResult:
        """Stop the whole group (``signals`` then SIGKILL, ``grace`` apart) and collect."""
        if self._result is not None:
            return self._result
        self.timed_out = self.timed_out or timed_out
        stop_group(self.pid, self.grace, signals)
        return self._finish()

    def _finish(self) -> ProcResult:
        self.proc.wait()
        stop_group(self.pid, self.grace)  # the leader is gone; stop what it left behind
        code = self.proc.returncode
        exit_code, sig = (None, -code) if code is not None and code < 0 else (code, None)
        out_text, out_size = snippet(self.stdout_log, self.snippet_bytes)
        err_text, err_size = snippet(self.stderr_log, self.snippet_bytes)
        self._result = ProcResult(
            exit_code=exit_code,
            signal=sig,
            timed_out=self.timed_out,
            duration_ms=int((time.monotonic() - self.started) * 1000),
            stdout_log=self.stdout_log,
            stderr_log=self.stderr_log,
            stdout_snippet=out_text,
            stderr_snippet=err_text,
            stdout_bytes=out_size,
            stderr_bytes=err_size,
        )
        return self._result


def start_logged(
    command: str | Sequence[str],
    *,
    cwd: Path,
    stdout_log: Path,
    stderr_log: Path,
    env: Mapping[str, str] | None = None,
    env_is_complete: bool = False,
    stdin_file: Path | None = None,
    grace: float = DEFAULT_GRACE_S,
    snippet_bytes: int = SNIPPET_BYTES,
) -> LoggedProcess:
    """Start ``command`` (a string runs with ``sh -c``) in its own session; do not wait.

    ``env`` is laid over this process's environment, unless ``env_is_complete`` says it
    already is the whole environment (see ``full_env``). stdin is ``stdin_file`` or empty.
    """
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    started = time.monotonic()
    with _open_log(stdout_log) as out, _open_log(stderr_log) as err:
        try:
            stdin = open(stdin_file, "rb") if stdin_file is not None else None  # noqa: SIM115
        except OSError as exc:
            raise ProcError(f"cannot read {stdin_file}: {exc.strerror}") from None
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=dict(env) if env_is_complete and env is not None else full_env(env),
                stdin=stdin if stdin is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise ProcError(f"cannot start {argv[0]!r} in {cwd}: {exc.strerror}") from None
        finally:
            if stdin is not None:
                stdin.close()
    return LoggedProcess(
        proc, stdout_log, stderr_log, started=started, grace=grace, snippet_bytes=snippet_bytes
    )


def run_logged(
    command: str | Sequence[str],
    *,
    cwd: Path,
    stdout_log: Path,
    stderr_log: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    grace: float = DEFAULT_GRACE_S,
    snippet_bytes: int = SNIPPET_BYTES,
    on_start: Callable[[int], None] | None = None,
    env_is_complete: bool = False,
) -> ProcResult:
    """Run ``command`` to the end (or its timeout) with output to the two log files."""
    process = start_logged(
        command,
        cwd=cwd,
        stdout_log=stdout_log,
        stderr_log=stderr_log,
        env=env,
        env_is_complete=env_is_complete,
        grace=grace,
        snippet_bytes=snippet_bytes,
    )
    if on_start is not None:
        on_start(process.pid)
    result = process.wait(timeout)
    return result if result is not None else process.stop(timed_out=True)


def _stop_leftovers_on_exit(pid: int, grace: float) -> None:
    """Block until ``pid`` exits (without reaping it), then stop what is left of its group."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    except ChildProcessError:
        return  # already reaped: the caller stops the group itself
    stop_group(pid, grace)


def run_capture(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = 120,
    stdin: bytes | None = None,
    grace: float = DEFAULT_GRACE_S,
) -> Captured:
    """Run a short command (git plumbing) and capture its output in memory."""
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=full_env(env),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        raise ProcError(f"cannot start {argv[0]!r} in {cwd}: {exc.strerror}") from None
    # A background process the command left behind may hold the pipes open after the
    # command itself is done: stop the group as soon as the leader exits, so reading ends.
    watcher = threading.Thread(target=_stop_leftovers_on_exit, args=(proc.pid, grace), daemon=True)
    watcher.start()
    timed_out = False
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        stop_group(proc.pid, grace)
        out, err = proc.communicate()
    except BaseException:
        stop_group(proc.pid, grace)
        proc.kill()
        proc.wait()
        raise
    stop_group(proc.pid, grace)
    watcher.join()
    return Captured(proc.returncode, out, err, timed_out)
