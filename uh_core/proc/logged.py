"""A running command with its output going to two logs: wait, stop, collect."""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from uh_core.errors import ProcError
from uh_core.proc.group import stop_group
from uh_core.proc.result import ProcResult, snippet
from uh_core.proc.spawn import Child
from uh_core.proc.streams import Stream

_MAX_POLL_MS = 60_000  # one poll() call at most; longer timeouts loop
_EXIT_POLL_S = 0.01  # without pidfd: how often to look whether the leader exited


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
        streams: tuple[Stream, Stream] | None = None,
        writers: tuple[int, ...] = (),
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
        # Our copies of the pipes' write ends, closed once the leader has exited: until then
        # a pipe cannot hang up, so only output or the exit wakes us.
        self._writers = writers
        self._by_fd: dict[int, Stream] = {}
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
                # Nothing wakes us at the exit: let the pipes' hang-up do it (as they do
                # when the command ends), and look at the leader every _EXIT_POLL_S.
                self._release_writers()
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
        try:
            stop_group(self.pid, self.grace, signals, self._pause)
        except BaseException:
            self._abandon()
            raise
        return self._finish()

    def _abandon(self) -> None:
        """Interrupted (Ctrl-C) while stopping or collecting: no more grace. What is left of
        the group is killed at once and every descriptor closed; no result."""
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=self.grace)
        self._release_writers()
        for stream in self._streams or ():
            stream.close()
        if self._pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = None

    def _release_writers(self) -> None:
        """The leader has exited (or we give up on it): close our write ends, so the pipes
        end when the last process of the command holding them does."""
        writers, self._writers = self._writers, ()
        for fd in writers:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _leader_exited(self) -> None:
        self._leader_gone = True
        self._release_writers()

    def _take(self, ready: list[tuple[int, int]]) -> None:
        """Move what the ready pipes hold into their logs; a pipe that hung up with nothing
        left is closed without a read. Notes the leader's exit when the pidfd is ready."""
        for fd, events in ready:
            if fd == self._pidfd:
                self._poller.unregister(fd)  # readable from now on: stop watching it
                self._leader_exited()
                continue
            stream = self._by_fd[fd]
            if events & select.POLLIN:
                stream.drain()
            else:  # POLLHUP (or an error) with nothing to read: the end of the stream
                stream.close_pipe()
            if stream.fd is None:
                self._poller.unregister(fd)

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
            self._take(self._poller.poll(wait_ms))
            if self._pidfd is None and not self._leader_gone and self._leader_exited_nowait():
                self._leader_exited()
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
            os.close(self._pidfd)
            self._pidfd = None
        self._leader_exited()
        deadline = time.monotonic() + self.grace
        while any(s.fd is not None for s in self._streams):
            ready = self._poller.poll(0)
            if not ready:
                break
            self._take(ready)
            if time.monotonic() >= deadline:
                break

    def _finish(self) -> ProcResult:
        try:
            return self._collect()
        except BaseException:
            self._abandon()
            raise

    def _collect(self) -> ProcResult:
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
