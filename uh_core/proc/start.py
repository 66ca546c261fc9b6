"""Starting commands: ``Prepared`` (made ready ahead), ``start_logged``, ``run_logged``."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from uh_core.errors import ProcError
from uh_core.proc.group import DEFAULT_GRACE_S
from uh_core.proc.interrupts import held
from uh_core.proc.logged import LoggedProcess
from uh_core.proc.result import SNIPPET_BYTES, ProcResult
from uh_core.proc.spawn import Child, Launcher, spawn
from uh_core.proc.streams import Stream, open_log


def full_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """This process's environment with ``env`` on top (compute once, reuse for many runs)."""
    merged = dict(os.environ)
    if env:
        merged.update(env)
    return merged


class Prepared:
    """A command ready to start: argv and environment made, and with lazy logs its older
    log files removed and its pipes created.

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
        env: Mapping[str, str] | None = None,
        env_is_complete: bool = False,
        stdin_file: Path | None = None,
        grace: float = DEFAULT_GRACE_S,
        snippet_bytes: int = SNIPPET_BYTES,
        lazy_logs: bool = False,
        fresh: bool = False,
        launcher: Launcher = spawn,
        pass_fds: Sequence[int] = (),
    ) -> None:
        """``run_logged`` says what the arguments mean. ``fresh`` (lazy logs): the caller
        knows nothing can be at either log path yet (a folder this run named and has not
        made, each path handed out once), so older logs are not looked for."""
        self.argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        self.env = env if env_is_complete and env is not None else full_env(env)
        self.cwd = cwd
        self.stdout_log = stdout_log
        self.stderr_log = stderr_log
        self.stdin_file = stdin_file
        self.grace = grace
        self.snippet_bytes = snippet_bytes
        self.launcher = launcher  # ``spawn``, or a confined judge session's
        self.pass_fds = tuple(pass_fds)  # kept open in the command as 3, 4, …
        self._pipes: tuple[int, int, int, int] | None = None  # out_r, out_w, err_r, err_w
        self.process: LoggedProcess | None = None  # once started: the caller's if start() raised
        self.lazy_logs = lazy_logs
        if not lazy_logs:
            return
        # An older log by that name must not pass for this command's.
        for path in () if fresh else (stdout_log, stderr_log):
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

    def discard(self) -> None:
        """Close the pipes of a command that will not start."""
        pipes, self._pipes = self._pipes, None
        for fd in pipes or ():
            with contextlib.suppress(OSError):
                os.close(fd)

    def _spawn(self, stdout: int, stderr: int) -> Child:
        if self.launcher is spawn and not self.pass_fds:
            return spawn(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin_file=self.stdin_file,
                stdout=stdout,
                stderr=stderr,
            )
        return self.launcher(
            self.argv,
            cwd=self.cwd,
            env=self.env,
            stdin_file=self.stdin_file,
            stdout=stdout,
            stderr=stderr,
            pass_fds=self.pass_fds,
        )

    def start(self) -> LoggedProcess:
        """Start the command. A Ctrl-C that arrives meanwhile waits until ``self.process``
        owns the command (``held``), which is then stopped and the interrupt raised."""
        try:
            with held():
                return self._start()
        except BaseException:
            if self.process is not None:
                self.process.stop()
            raise

    def _start(self) -> LoggedProcess:
        started = time.monotonic()
        read_ends: tuple[int, int] | None = None
        writers: tuple[int, ...] = ()
        if not self.lazy_logs:
            with open_log(self.stdout_log) as out, open_log(self.stderr_log) as err:
                proc = self._spawn(out.fileno(), err.fileno())
        else:
            if self._pipes is None:
                raise ProcError(f"{self.argv!r}: started twice, or after discard()")
            out_r, out_w, err_r, err_w = self._pipes
            self._pipes = None
            # The write ends stay open here until the leader has exited: the pipes cannot
            # hang up before the exit is seen, so a short command wakes us once, not twice.
            read_ends, writers = (out_r, err_r), (out_w, err_w)
            try:
                proc = self._spawn(out_w, err_w)
            except BaseException:
                for fd in (out_r, out_w, err_r, err_w):
                    os.close(fd)
                raise
        with _killed_if_interrupted(proc):
            self.process = LoggedProcess(
                proc,
                self.stdout_log,
                self.stderr_log,
                started=started,
                grace=self.grace,
                snippet_bytes=self.snippet_bytes,
                streams=None
                if read_ends is None
                else (Stream(read_ends[0], self.stdout_log), Stream(read_ends[1], self.stderr_log)),
                writers=writers,
            )
        return self.process

    def __del__(self) -> None:
        self.discard()


@contextlib.contextmanager
def _killed_if_interrupted(proc: Child) -> Iterator[None]:
    """Between the spawn and the object that will stop it, an error (the interrupt is held
    off there, ``held``) would leave the command running with nobody to stop it: its whole
    group is killed and reaped instead. The command may already run."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
        raise


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
    launcher: Launcher = spawn,
    pass_fds: Sequence[int] = (),
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
        launcher=launcher,
        pass_fds=pass_fds,
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
    try:
        process = prepared.start()
        if on_start is not None:
            on_start(process.pid)
    except BaseException:
        # A Ctrl-C may land as start() returns, before ``process`` is ours: ``prepared``
        # still holds it (and start() itself kills what it spawned if it had no object yet).
        if prepared.process is not None:
            prepared.process.stop()
        raise
    result = process.wait(timeout)
    return result if result is not None else process.stop(timed_out=True)
