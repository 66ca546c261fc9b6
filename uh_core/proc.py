"""The one subprocess helper: every command the engine runs goes through here.

Each command gets its own session (so its whole process group can be signalled), its
output goes straight to log files (memory stays flat whatever it prints; only bounded
head/tail snippets are read back), and a timeout signals the whole group with SIGTERM,
waits a grace period, then sends SIGKILL. When the command ends, anything it left
running in its group is stopped the same way: no orphan survives a run.

``run_logged(..., lazy_logs=True)`` (what verify uses) gives the command pipes instead of
files and moves what arrives into the log files, creating a file only when its stream
writes its first byte: most checks print nothing, and creating two empty files was the
largest cost of a short check after starting it. The data is spliced from pipe to file
(never held in memory), the snippets are read back from the file, and the pipes are
drained while a timeout's grace runs, so a command that prints as it dies is not blocked.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
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
from uh_core.spawn import Child, Launch, spawn

DEFAULT_GRACE_S = 2.0
SNIPPET_BYTES = 4096
_MAX_POLL_MS = 60_000  # one poll() call at most; longer timeouts loop
_CHUNK = 1 << 20  # bytes moved from a pipe to its log per call
_BIG_PIPE = 1 << 20  # a stream that fills its pipe gets a pipe this large (if allowed)
_EXIT_POLL_S = 0.01  # without pidfd: how often to look whether the leader exited


@dataclass(frozen=True)
class ProcResult:
    """How a command ended and where its output is.

    ``stdout_log``/``stderr_log`` are the paths asked for. With lazy logs a stream that
    printed nothing has no file there: ``stdout_file``/``stderr_file`` say which exist.
    """

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
    lazy_logs: bool = False

    @property
    def stdout_file(self) -> Path | None:
        """The stdout log, or None when lazy logs left it uncreated (nothing printed)."""
        return self.stdout_log if self.stdout_bytes or not self.lazy_logs else None

    @property
    def stderr_file(self) -> Path | None:
        """The stderr log, or None when lazy logs left it uncreated (nothing printed)."""
        return self.stderr_log if self.stderr_bytes or not self.lazy_logs else None


@dataclass(frozen=True)
class Captured:
    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool = False


def snippet(path: Path, limit: int = SNIPPET_BYTES) -> tuple[str, int]:
    """Head and tail of a log (``limit`` bytes each) with a marker of what was cut."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return "", 0
    try:
        return _snippet_of(fd, os.fstat(fd).st_size, limit)
    finally:
        os.close(fd)


def _read_at(fd: int, count: int, offset: int) -> bytes:
    parts: list[bytes] = []
    while count > 0:
        part = os.pread(fd, count, offset)
        if not part:
            break
        parts.append(part)
        count -= len(part)
        offset += len(part)
    return b"".join(parts)


def _snippet_of(fd: int, size: int, limit: int) -> tuple[str, int]:
    """``snippet`` of the first ``size`` bytes of an open file."""
    if size <= 2 * limit:
        return _read_at(fd, size, 0).decode("utf-8", errors="replace"), size
    head = _read_at(fd, limit, 0)
    tail = _read_at(fd, limit, size - limit)
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
    pause: Callable[[float], object] = time.sleep,
) -> bool:
    """Send each of ``signals`` to the group, waiting ``grace`` after each, then SIGKILL.

    True if anything was alive. Agents that save partial state on SIGINT get
    ``signals=(SIGINT, SIGTERM)``. ``pause`` waits between looks (lazy logs drain their
    pipes meanwhile, so a process printing as it dies is not blocked on a full pipe).
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
            pause(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    return True


def full_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """This process's environment with ``env`` on top (compute once, reuse for many runs)."""
    merged = dict(os.environ)
    if env:
        merged.update(env)
    return merged


def _exited_within(proc: Child, timeout: float | None) -> bool:
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


def _create_log(path: Path) -> int:
    """A new, empty log for lazy logs; readable too, so the snippets come from this fd."""
    flags = os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    try:
        return os.open(path, flags, 0o644)
    except FileNotFoundError:  # its folder does not exist yet
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, flags, 0o644)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class _Stream:
    """One stream under lazy logs: the read end of the command's pipe and its log file,
    created when the first byte arrives. ``drain`` is called only when poll() says the
    pipe is readable, so it never blocks."""

    def __init__(self, fd: int, path: Path) -> None:
        self.fd: int | None = fd  # None once the pipe is closed
        self.path = path
        self.log: int | None = None
        self.size = 0
        self.error: OSError | None = None  # the log could not be written: the rest is dropped
        self._splice = hasattr(os, "splice")  # pipe to file without a copy through Python
        self._grown = False

    def drain(self) -> None:
        assert self.fd is not None
        if self.log is not None and self._splice and self.error is None:
            try:
                moved = os.splice(self.fd, self.log, _CHUNK)
            except OSError as exc:
                if exc.errno not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                    self.error = exc
                self._splice = False  # this file system cannot: copy from now on
            else:
                self._took(moved)
                return
        chunk = os.read(self.fd, _CHUNK)
        self._took(len(chunk))
        if not chunk or self.error is not None:
            return
        try:
            if self.log is None:
                self.log = _create_log(self.path)
            _write_all(self.log, chunk)
        except OSError as exc:
            self.error = exc

    def _took(self, count: int) -> None:
        if not count:  # end of file: every writer is gone
            self.close_pipe()
            return
        self.size += count
        if count >= 65536 and not self._grown:  # it fills a default pipe: give it a larger one
            self._grown = True
            assert self.fd is not None
            with contextlib.suppress(OSError, AttributeError):
                fcntl.fcntl(self.fd, fcntl.F_SETPIPE_SZ, _BIG_PIPE)

    def close_pipe(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def finish(self, limit: int) -> tuple[str, int]:
        """Close the pipe and the log; the snippet of what was written and the byte count."""
        self.close_pipe()
        if self.log is None:
            return "", self.size
        try:
            text, _ = _snippet_of(self.log, os.fstat(self.log).st_size, limit)
        finally:
            os.close(self.log)
            self.log = None
        return text, self.size


class LoggedProcess:
    """A command started by ``start_logged``: its own session, output in two log files."""

    def __init__(
        self,
        proc: Child,
        stdout_log: Path,
        stderr_log: Path,
        *,
        started: float,
        grace: float,
        snippet_bytes: int,
        streams: tuple[_Stream, _Stream] | None = None,
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
        # Lazy logs: the pipes and a pidfd, watched together by one poll object.
        self._streams = streams
        self._by_fd: dict[int, _Stream] = {}
        self._pidfd: int | None = None
        self._leader_gone = False
        self._poller = select.poll()
        if streams is not None:
            for stream in streams:
                assert stream.fd is not None
                self._by_fd[stream.fd] = stream
                self._poller.register(stream.fd, select.POLLIN)
            try:
                self._pidfd = os.pidfd_open(self.pid)
            except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
                self._pidfd = None
            else:
                self._poller.register(self._pidfd, select.POLLIN)

    def running(self) -> bool:
        return self._result is None and self.proc.poll() is None

    def wait(self, timeout: float | None = None) -> ProcResult | None:
        """The result once the leader exits (leftovers stopped); None if still running."""
        if self._result is not None:
            return self._result
        try:
            if self._streams is not None:
                exited = self._pump(timeout, until_exit=True)
            else:
                exited = _exited_within(self.proc, timeout)
        except BaseException:
            self.stop()
            raise
        if self._log_failed():
            return self.stop()  # evidence can no longer be kept: stop now (and raise)
        if not exited:
            return None
        return self._finish()

    def stop(
        self, signals: Sequence[signal.Signals] = (signal.SIGTERM,), *, timed_out: bool = False
    ) -> ProcResult:
        """Stop the whole group (``signals`` then SIGKILL, ``grace`` apart) and collect."""
        if self._result is not None:
            return self._result
        self.timed_out = self.timed_out or timed_out
        stop_group(self.pid, self.grace, signals, self._pause)
        return self._finish()

    def _pause(self, seconds: float) -> None:
        """stop_group's wait between looks: with lazy logs, the pipes are drained meanwhile."""
        if self._streams is None:
            time.sleep(seconds)
        else:
            self._pump(seconds, until_exit=False)

    def _leader_exited_nowait(self) -> bool:
        """Without a pidfd: has the leader exited? (Not reaped: its group id stays taken.)"""
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def _log_failed(self) -> bool:
        return self._streams is not None and any(s.error is not None for s in self._streams)

    def _pump(self, timeout: float | None, *, until_exit: bool) -> bool:
        """Drain the pipes for up to ``timeout`` seconds (None: no limit). With ``until_exit``
        return True as soon as the leader has exited (or a log cannot be written), False
        when the time is up."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if until_exit and (self._leader_gone or self._log_failed()):
                return True
            if deadline is None:
                wait_ms = _MAX_POLL_MS
            else:
                remaining = deadline - time.monotonic()
                wait_ms = max(0, min(math.ceil(remaining * 1000), _MAX_POLL_MS))
            if self._pidfd is None and not self._leader_gone:
                wait_ms = min(wait_ms, int(_EXIT_POLL_S * 1000))
            for fd, _ in self._poller.poll(wait_ms):
                if fd == self._pidfd:
                    self._leader_gone = True
                    self._poller.unregister(fd)  # readable from now on: stop watching it
                    continue
                stream = self._by_fd[fd]
                stream.drain()
                if stream.fd is None:
                    self._poller.unregister(fd)
            if self._pidfd is None and not self._leader_gone:
                self._leader_gone = self._leader_exited_nowait()
            if until_exit and (self._leader_gone or self._log_failed()):
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def _drain_rest(self) -> None:
        """After the group is gone: take what its pipes still hold, then close them. A
        process that left the group (its own session) and still holds a pipe gets at most
        the grace period of draining, then EPIPE: it cannot keep us waiting."""
        assert self._streams is not None
        if self._pidfd is not None:
            if not self._leader_gone:
                self._poller.unregister(self._pidfd)
                self._leader_gone = True
            os.close(self._pidfd)
            self._pidfd = None
        deadline = time.monotonic() + self.grace
        while any(s.fd is not None for s in self._streams):
            ready = self._poller.poll(0)
            if not ready:
                break
            for fd, _ in ready:
                stream = self._by_fd[fd]
                stream.drain()
                if stream.fd is None:
                    self._poller.unregister(fd)
            if time.monotonic() >= deadline:
                break

    def _finish(self) -> ProcResult:
        self.proc.wait()
        # The leader is gone; stop what it left behind.
        stop_group(self.pid, self.grace, pause=self._pause)
        if self._streams is not None:
            self._drain_rest()
            out, err = self._streams
            out_text, out_size = out.finish(self.snippet_bytes)
            err_text, err_size = err.finish(self.snippet_bytes)
            for stream in self._streams:
                if stream.error is not None:  # the group is stopped and every fd closed
                    raise ProcError(f"cannot write {stream.path}: {stream.error.strerror}")
        else:
            out_text, out_size = snippet(self.stdout_log, self.snippet_bytes)
            err_text, err_size = snippet(self.stderr_log, self.snippet_bytes)
        code = self.proc.returncode
        exit_code, sig = (None, -code) if code is not None and code < 0 else (code, None)
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
            lazy_logs=self._streams is not None,
        )
        return self._result


class Prepared:
    """A command ready to start: argv and environment made, and with lazy logs its older
    log files removed, its pipes created and its ``spawn.Launch`` worked out.

    That is the part of starting that does not need the previous command to have ended:
    a caller running commands one after another prepares the next while one runs (verify
    does), so only ``spawn`` is left between one command's end and the next one's start.
    ``start()`` once, or ``discard()`` what will not run.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        cwd: Path,
        stdout_log: Path,
        stderr_log: Path,
        env: Mapping[str, str] | None,
        env_is_complete: bool,
        stdin_file: Path | None,
        grace: float,
        snippet_bytes: int,
        lazy_logs: bool,
    ) -> None:
        self.argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        self.env = env if env_is_complete and env is not None else full_env(env)
        self.cwd = cwd
        self.stdout_log = stdout_log
        self.stderr_log = stderr_log
        self.stdin_file = stdin_file
        self.grace = grace
        self.snippet_bytes = snippet_bytes
        self._pipes: tuple[int, int, int, int] | None = None  # out_r, out_w, err_r, err_w
        self.lazy_logs = lazy_logs
        if not lazy_logs:
            return
        for path in (stdout_log, stderr_log):  # an older log by that name must not pass
            try:
                os.unlink(path)
            except (FileNotFoundError, NotADirectoryError):
                pass  # nothing there (a folder that is a file fails when the first byte comes)
            except OSError as exc:
                raise ProcError(f"cannot replace {path}: {exc.strerror}") from None
        out_r, out_w = os.pipe()
        try:
            err_r, err_w = os.pipe()
        except OSError:
            os.close(out_r)
            os.close(out_w)
            raise
        self._pipes = (out_r, out_w, err_r, err_w)
        self._launch = Launch(
            self.argv,
            cwd=cwd,
            env=self.env,
            stdin_file=stdin_file,
            stdout=out_w,
            stderr=err_w,
        )

    def discard(self) -> None:
        """Close the pipes of a command that will not start."""
        pipes, self._pipes = self._pipes, None
        for fd in pipes or ():
            with contextlib.suppress(OSError):
                os.close(fd)

    def start(self) -> LoggedProcess:
        started = time.monotonic()
        if not self.lazy_logs:
            with _open_log(self.stdout_log) as out, _open_log(self.stderr_log) as err:
                proc = spawn(
                    self.argv,
                    cwd=self.cwd,
                    env=self.env,
                    stdin_file=self.stdin_file,
                    stdout=out.fileno(),
                    stderr=err.fileno(),
                )
            return LoggedProcess(
                proc,
                self.stdout_log,
                self.stderr_log,
                started=started,
                grace=self.grace,
                snippet_bytes=self.snippet_bytes,
            )
        if self._pipes is None:
            raise ProcError(f"{self.argv!r}: started twice, or after discard()")
        out_r, out_w, err_r, err_w = self._pipes
        self._pipes = None
        try:
            proc = self._launch.start()
        except BaseException:
            os.close(out_r)
            os.close(err_r)
            raise
        finally:
            os.close(out_w)
            os.close(err_w)
        streams = (_Stream(out_r, self.stdout_log), _Stream(err_r, self.stderr_log))
        return LoggedProcess(
            proc,
            self.stdout_log,
            self.stderr_log,
            started=started,
            grace=self.grace,
            snippet_bytes=self.snippet_bytes,
            streams=streams,
        )

    def __del__(self) -> None:
        self.discard()


def prepare_logged(
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
    lazy_logs: bool = False,
) -> Prepared:
    """``command`` ready to start (see ``Prepared``); ``run_logged`` says what the rest means."""
    return Prepared(
        command,
        cwd=cwd,
        stdout_log=stdout_log,
        stderr_log=stderr_log,
        env=env,
        env_is_complete=env_is_complete,
        stdin_file=stdin_file,
        grace=grace,
        snippet_bytes=snippet_bytes,
        lazy_logs=lazy_logs,
    )


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
    The output goes straight to the two files, so they can be followed while it runs.
    """
    return Prepared(
        command,
        cwd=cwd,
        stdout_log=stdout_log,
        stderr_log=stderr_log,
        env=env,
        env_is_complete=env_is_complete,
        stdin_file=stdin_file,
        grace=grace,
        snippet_bytes=snippet_bytes,
        lazy_logs=False,
    ).start()


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
    on_start: Callable[[int], object] | None = None,
    env_is_complete: bool = False,
    lazy_logs: bool = False,
) -> ProcResult:
    """Run ``command`` to the end (or its timeout) with output to the two log files.

    With ``lazy_logs`` the output goes through pipes and a log file is created only for a
    stream that prints something (an older file at either path is removed first);
    ``ProcResult.stdout_file``/``stderr_file`` tell which exist.
    """
    prepared = Prepared(
        command,
        cwd=cwd,
        stdout_log=stdout_log,
        stderr_log=stderr_log,
        env=env,
        env_is_complete=env_is_complete,
        stdin_file=None,
        grace=grace,
        snippet_bytes=snippet_bytes,
        lazy_logs=lazy_logs,
    )
    return run_prepared(prepared, timeout=timeout, on_start=on_start)


def run_prepared(
    prepared: Prepared,
    *,
    timeout: float | None = None,
    on_start: Callable[[int], object] | None = None,
) -> ProcResult:
    """Start ``prepared`` and run it to the end (or its timeout): ``run_logged``'s second
    half. ``on_start(pid)`` is called once it runs (its work overlaps the command's)."""
    process = prepared.start()
    if on_start is not None:
        try:
            on_start(process.pid)
        except BaseException:
            process.stop()
            raise
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
