"""Starting one command in its own session: ``posix_spawn`` when it can, ``Popen`` otherwise.

``proc`` (the one subprocess helper) starts every command through ``spawn``. Both ways give
the child the same world: a new session (so its whole group can be signalled), stdin from
the given file or ``/dev/null``, stdout/stderr on the given descriptors, SIGPIPE and SIGXFSZ
back at their defaults (Python ignores them; a ``yes | head`` in a check must still end),
and no descriptor of ours or of whoever started us beyond those three.

``posix_spawn`` costs about 0.15 ms less per command than ``Popen`` (whose Python side
re-encodes the environment and checks its arguments on every call): on a mission of
trivial checks that is a tenth of verify's whole cost per criterion. It has no way to
change directory in the child, so it is used only when the command's ``cwd`` already is
this process's working directory (``uh-core verify`` moves there once); any other ``cwd``
goes through ``Popen``.

Where the CPython version is one whose ``_posixsubprocess.fork_exec`` arguments are known
(3.11 to 3.13), that same case goes through it instead (``_fork_exec``: what Popen itself
calls, without Popen's Python side, and without the listing of our descriptors that
``os.posix_spawn`` needs before each start): half the parent's cost again. Any other
version, or a process that ignores SIGINT/SIGQUIT, uses ``os.posix_spawn``.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Protocol

from uh_core.errors import ProcError

try:  # untyped on purpose: its stub does not say what Popen really passes
    _posixsubprocess: ModuleType | None = importlib.import_module("_posixsubprocess")
except ImportError:  # not CPython on POSIX
    _posixsubprocess = None

_SPAWN = [hasattr(os, "posix_spawn") and hasattr(os, "POSIX_SPAWN_DUP2")]  # [usable]
# [usable]: ``_posixsubprocess.fork_exec`` with the 23 arguments Popen gives it in CPython
# 3.11 to 3.13 (read from their subprocess.py); any other version uses ``os.posix_spawn``.
_FORK_EXEC = [
    _posixsubprocess is not None
    and sys.implementation.name == "cpython"
    and sys.version_info[:2] in ((3, 11), (3, 12), (3, 13))
    and hasattr(_posixsubprocess, "fork_exec")
    and getattr(subprocess, "_USE_VFORK", False) is True
]
# What Popen(restore_signals=True) puts back: Python itself ignores these two.
_DEFAULT_SIGNALS = tuple(
    s for s in (getattr(signal, "SIGPIPE", None), getattr(signal, "SIGXFSZ", None)) if s
)
# Started as a background job of a non-interactive shell, uh inherits SIGINT and SIGQUIT
# ignored, and so would every command it starts: a CLI that saves its partial result on SIGINT
# (uh's first cancel signal for claude, codex, omp) would then not hear it, and a shell script
# cannot even trap a signal ignored on entry. Each command starts with them at their default,
# as from an interactive shell.
_JOB_SIGNALS = (signal.SIGINT, signal.SIGQUIT)
# signal.getsignal without its conversion to an enum (6 us a call, asked at every start).
_getsignal: Callable[[int], object] = getattr(signal, "_signal", signal).getsignal


def _default_job_signals() -> None:
    """``preexec_fn`` (only when this process ignores one of ``_JOB_SIGNALS``)."""
    for signum in _JOB_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)


def job_signals_preexec() -> Callable[[], None] | None:
    """Popen's ``preexec_fn`` putting SIGINT and SIGQUIT back to their default in the child,
    or None (no fork-time Python) when this process does not ignore them."""
    if any(_getsignal(signum) == signal.SIG_IGN for signum in _JOB_SIGNALS):
        return _default_job_signals
    return None


_FD_DIR = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"


class Child(Protocol):
    """What the helper needs of a started command (``subprocess.Popen`` has it too)."""

    pid: int
    returncode: int | None

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...


class Spawned:
    """A command started by ``posix_spawn``: reaped with ``waitpid``, like Popen does."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def _reap(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:
            # Someone else reaped it (SIGCHLD ignored, or a stray waitpid): its exit status
            # is gone, and a check whose status is unknown must never pass for exit 0.
            raise ProcError(
                f"the exit status of process {self.pid} was lost (is SIGCHLD ignored?)"
            ) from None
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)

    def poll(self) -> int | None:
        if self.returncode is None:
            self._reap(os.WNOHANG)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:
            return self.returncode
        if timeout is None:
            self._reap(0)
            assert self.returncode is not None
            return self.returncode
        deadline = time.monotonic() + timeout
        pause = 0.0005
        while self.poll() is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(min(pause, remaining))
            pause = min(pause * 2, 0.05)
        assert self.returncode is not None
        return self.returncode

    def __del__(self) -> None:
        if self.returncode is None:  # dropped unwaited: reap it if it is done (no zombie)
            with contextlib.suppress(OSError, ProcError):
                self._reap(os.WNOHANG)


def _inherited(keep: tuple[int, ...]) -> list[int]:
    """Descriptors above 2 a child would inherit (ours are close-on-exec; these came from
    whoever started us, or from an explicit ``os.dup2``): Popen(close_fds=True) closes them."""
    try:
        names = os.listdir(_FD_DIR)
    except OSError:
        return []
    found = []
    for name in names:
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                if os.get_inheritable(fd):
                    found.append(fd)
            except OSError:  # the descriptor listdir itself used, now closed
                continue
    return found


def _open_stdin(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
    if stat.S_ISDIR(os.fstat(fd).st_mode):
        os.close(fd)
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    return fd


def _here(cwd: Path) -> bool:
    try:
        return os.fspath(cwd) == os.getcwd()
    except OSError:  # our own working directory was removed
        return False


class Launcher(Protocol):
    """What starts a command: ``spawn`` here, or a confined judge session's ``spawn``."""

    def __call__(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin_file: Path | None,
        stdout: int,
        stderr: int,
        pass_fds: Sequence[int] = (),
    ) -> Child: ...


def spawn(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin_file: Path | None,
    stdout: int,
    stderr: int,
    pass_fds: Sequence[int] = (),
) -> Child:
    """Start ``argv`` in ``cwd`` in a new session; ``env`` is its whole environment.
    ``pass_fds`` are kept open in the command as 3, 4, … (in that order)."""
    try:
        stdin = _open_stdin(stdin_file) if stdin_file is not None else None
    except OSError as exc:
        raise ProcError(f"cannot read {stdin_file}: {exc.strerror}") from None
    try:
        # posix_spawn only for a path (verify's /bin/sh): a bare name goes through Popen,
        # whose PATH search tries every entry and reports the first real error.
        if (
            (_FORK_EXEC[0] or _SPAWN[0])
            and not pass_fds
            and os.sep in argv[0]
            and stdout > 2
            and stderr > 2
            and (stdin is None or stdin > 2)
            and _here(cwd)
        ):
            if _FORK_EXEC[0] and job_signals_preexec() is None:
                try:
                    return _fork_exec(argv, env, stdin, stdout, stderr)
                except TypeError:  # not the arguments this version takes: never again
                    _FORK_EXEC[0] = False
            if _SPAWN[0]:
                try:
                    return _posix_spawn(argv, env, stdin, stdout, stderr)
                except NotImplementedError:  # no POSIX_SPAWN_SETSID here: Popen from now on
                    _SPAWN[0] = False
        return subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
            close_fds=True,
            preexec_fn=_with_fds(pass_fds) if pass_fds else job_signals_preexec(),
            # Popen closes every other descriptor after preexec_fn: keep the targets too
            pass_fds=(*range(3, 3 + len(pass_fds)), *pass_fds) if pass_fds else (),
        )
    except OSError as exc:
        raise ProcError(f"cannot start {argv[0]!r} in {cwd}: {exc.strerror}") from None
    finally:
        if stdin is not None:
            os.close(stdin)


def _with_fds(fds: Sequence[int]) -> Callable[[], None]:
    """``preexec_fn`` putting ``fds`` on 3, 4, … in the child (and the job signals back)."""
    wanted = list(fds)

    def move() -> None:
        _default_job_signals()
        copies = [os.dup(fd) for fd in wanted]  # above every target: no overlap
        for target, fd in enumerate(copies, start=3):
            os.dup2(fd, target)
        for fd in copies:
            if fd not in range(3, 3 + len(copies)):
                os.close(fd)

    return move


_ENV_BLOCK: list[tuple[dict[str, str], list[bytes]]] = []  # the last environment, encoded


def _env_block(env: Mapping[str, str]) -> list[bytes]:
    """``env`` as ``KEY=value`` bytes (what execve takes). Commands run one after another
    with the same environment (verify: one variable differs, and only between repeats), so
    the last one encoded is kept and reused while the mapping is equal."""
    if _ENV_BLOCK and _ENV_BLOCK[0][0] == env:
        return _ENV_BLOCK[0][1]
    block = []
    for key, value in env.items():
        name = os.fsencode(key)
        if b"=" in name:
            raise ValueError("illegal environment variable name")
        block.append(name + b"=" + os.fsencode(value))
    _ENV_BLOCK[:] = [(dict(env), block)]
    return block


def _fork_exec(
    argv: list[str], env: Mapping[str, str], stdin: int | None, stdout: int, stderr: int
) -> Spawned:
    """Start ``argv`` the way ``subprocess.Popen`` does underneath (``vfork`` and ``exec``
    in C: every descriptor but 0-2 closed in the child by one ``close_range``, SIGPIPE and
    SIGXFSZ at their defaults, a new session), without Popen's per-call Python work.

    Against ``os.posix_spawn`` this saves the listing of our descriptors before each start
    (``_inherited``), a ``getrlimit`` per file action and the encoding of the environment:
    about half of the parent's cost of a start (0.14 against 0.29 ms of CPU per command on
    the development machine). Only used when this process does not ignore SIGINT/SIGQUIT
    (putting them back needs Python code in the child: ``os.posix_spawn`` does that).
    """
    assert _posixsubprocess is not None
    env_block = _env_block(env)
    executable = os.fsencode(argv[0])
    devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC) if stdin is None else None
    errpipe_read, errpipe_write = os.pipe()
    pid = -1
    try:
        pid = _posixsubprocess.fork_exec(
            argv, (executable,), True, (errpipe_write,), None, env_block,
            stdin if devnull is None else devnull, -1,  # p2cread, p2cwrite
            -1, stdout, -1, stderr,  # c2pread, c2pwrite, errread, errwrite
            errpipe_read, errpipe_write,
            True, True, -1,  # restore_signals, start_new_session, process_group
            None, None, None, -1,  # gid, extra groups, uid, umask
            None, True,  # preexec_fn, allow_vfork
        )  # fmt: skip
        os.close(errpipe_write)
        errpipe_write = -1
        failure = b""
        while len(failure) <= 50_000:  # empty once the child has exec'd (close-on-exec)
            part = os.read(errpipe_read, 50_000)
            if not part:
                break
            failure += part
    except BaseException:
        if pid > 0:  # started, but we cannot hand it over (Ctrl-C): it must not run on
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        raise
    finally:
        for fd in (errpipe_read, errpipe_write, devnull):
            if fd is not None and fd >= 0:
                os.close(fd)
    if failure:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        name, _, rest = failure.partition(b":")
        code, _, _ = rest.partition(b":")
        try:
            number = int(code, 16)
        except ValueError:
            number = 0
        if name == b"OSError" and number:
            raise OSError(number, os.strerror(number), argv[0])
        raise OSError(errno.ENOEXEC, failure.decode("utf-8", "replace"), argv[0])
    return Spawned(pid)


def _posix_spawn(
    argv: list[str], env: Mapping[str, str], stdin: int | None, stdout: int, stderr: int
) -> Spawned:
    first: tuple[int, int, int] | tuple[int, int, str, int, int] = (
        (os.POSIX_SPAWN_DUP2, stdin, 0)
        if stdin is not None
        else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)
    )
    actions = [
        first,
        (os.POSIX_SPAWN_DUP2, stdout, 1),
        (os.POSIX_SPAWN_DUP2, stderr, 2),
        # Listed at each start: a descriptor opened a moment ago must not leak either.
        *((os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited((stdout, stderr))),
    ]
    pid = os.posix_spawn(
        argv[0],
        argv,
        env,
        file_actions=actions,
        setsid=True,
        setsigdef=(*_DEFAULT_SIGNALS, *_JOB_SIGNALS),
    )
    return Spawned(pid)
