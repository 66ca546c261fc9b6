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
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from uh_core.errors import ProcError

_SPAWN = [hasattr(os, "posix_spawn") and hasattr(os, "POSIX_SPAWN_DUP2")]  # [usable]
# What Popen(restore_signals=True) puts back: Python itself ignores these two.
_DEFAULT_SIGNALS = tuple(
    s for s in (getattr(signal, "SIGPIPE", None), getattr(signal, "SIGXFSZ", None)) if s
)
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

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:
            return self.returncode
        if timeout is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
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


def _here(cwd: Path) -> bool:
    try:
        return os.fspath(cwd) == os.getcwd()
    except OSError:  # our own working directory was removed
        return False


class Launch:
    """One command, worked out as far as it can be before it starts (``start()`` then does
    little more than the start): the way to start it, and for ``posix_spawn`` the
    program's path and the descriptors to hand over and to close. ``proc.Prepared`` makes
    one while the command before still runs. Whether ``cwd`` is ours is asked again at
    ``start()``: that is what makes ``posix_spawn`` right."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin_file: Path | None,
        stdout: int,
        stderr: int,
    ) -> None:
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.stdin_file = stdin_file
        self.stdout = stdout
        self.stderr = stderr
        self._executable: str | None = None
        self._actions: list[tuple[int, int, int] | tuple[int, int]] | None = None
        if _SPAWN[0] and stdout > 2 and stderr > 2:
            executable: str | None = argv[0]
            if os.sep not in argv[0]:  # a bare name: search PATH as Popen does
                executable = _which(argv[0], env)
            self._executable = executable
            self._actions = [
                (os.POSIX_SPAWN_DUP2, stdout, 1),
                (os.POSIX_SPAWN_DUP2, stderr, 2),
                *((os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited((stdout, stderr))),
            ]

    def start(self) -> Child:
        """Start it in ``cwd`` in a new session; ``env`` is its whole environment."""
        stdin_file = self.stdin_file
        try:
            stdin = (
                os.open(stdin_file, os.O_RDONLY | os.O_CLOEXEC) if stdin_file is not None else None
            )
        except OSError as exc:
            raise ProcError(f"cannot read {stdin_file}: {exc.strerror}") from None
        try:
            if (
                self._actions is not None
                and _SPAWN[0]
                and (stdin is None or stdin > 2)
                and _here(self.cwd)
            ):
                try:
                    return self._posix_spawn(stdin)
                except NotImplementedError:  # no POSIX_SPAWN_SETSID here: Popen from now on
                    _SPAWN[0] = False
            return subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=stdin if stdin is not None else subprocess.DEVNULL,
                stdout=self.stdout,
                stderr=self.stderr,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise ProcError(
                f"cannot start {self.argv[0]!r} in {self.cwd}: {exc.strerror}"
            ) from None
        finally:
            if stdin is not None:
                os.close(stdin)

    def _posix_spawn(self, stdin: int | None) -> Spawned:
        assert self._actions is not None
        if self._executable is None:
            raise FileNotFoundError(2, "No such file or directory", self.argv[0])
        first: tuple[int, int, int] | tuple[int, int, str, int, int] = (
            (os.POSIX_SPAWN_DUP2, stdin, 0)
            if stdin is not None
            else (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)
        )
        pid = os.posix_spawn(
            self._executable,
            self.argv,
            self.env,
            file_actions=[first, *self._actions],
            setsid=True,
            setsigdef=_DEFAULT_SIGNALS,
        )
        return Spawned(pid)


def spawn(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin_file: Path | None,
    stdout: int,
    stderr: int,
) -> Child:
    """Start ``argv`` in ``cwd`` in a new session; ``env`` is its whole environment."""
    launch = Launch(argv, cwd=cwd, env=env, stdin_file=stdin_file, stdout=stdout, stderr=stderr)
    return launch.start()


def _which(name: str, env: Mapping[str, str]) -> str | None:
    for folder in os.get_exec_path(dict(env)):
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None
