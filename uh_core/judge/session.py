"""A confined judge session: one bubblewrap sandbox per gate stage, in which every command
of that stage is started by the zygote (``zygote.py``) — one sandbox's start-up for a
whole stage, not one per criterion.

Inside, the code under judgement sees the machine read-only, writes only its scratch
checkout and a private ``/tmp`` (its ``HOME`` is there too), has no network but its own
loopback, lives in a PID namespace that dies with the session, and gets only the
environment ``checkenv.py`` allows. ``ConfinedSession.spawn`` has the signature of
``uh_core.proc.spawn.spawn``, so the one subprocess helper (logs, snippets, the group
timeout) runs confined commands unchanged: each command is a real process of this
machine, seen by its host pid (found through the zygote's children), so a pidfd wakes us at
its exit and a timeout signals its group as it would any other.

What a command left running is killed by the zygote when it ends, and named: the session
keeps every survivor (``survivors``), and a stage that had any is never green.
"""

from __future__ import annotations

import array
import contextlib
import inspect
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from uh_core.errors import IsolationError, ProcError
from uh_core.isolation.bwrap import find_bwrap, wrap_argv
from uh_core.judge import zygote
from uh_core.layout import hidden_from_confined
from uh_core.proc.spawn import Child

START_TIMEOUT_S = 30.0
_CLOSE_WAIT_S = 5.0
_MAX_MESSAGE = 1 << 20
GONE_PID = 4_194_305  # above the kernel's largest pid_max: signals to it find nothing


@dataclass(frozen=True)
class Survivor:
    """A process a confined command left running, killed when the command ended."""

    pid: int
    argv: str

    def line(self) -> str:
        return f"pid {self.pid}: {self.argv}"


class ConfinedChild:
    """A command the zygote started: the ``Child`` the subprocess helper waits on."""

    def __init__(self, session: ConfinedSession, pid: int) -> None:
        self.session = session
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.session._exit_status(self, block=False)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None and not self.session._exit_status(
            self, block=True, timeout=timeout
        ):
            raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
        assert self.returncode is not None
        return self.returncode


@dataclass
class SessionSpec:
    """Where a session's commands run and what they may touch."""

    scratch: Path  # writable: the pristine checkout and the stage's output folder
    readable: list[Path] = field(default_factory=list)  # visible even if under /tmp
    network: bool = False  # only a criterion that declares it gets the network
    home: str = "/tmp/home"


def _python_readable() -> list[Path]:
    """What the zygote's interpreter needs, even where it lives under ``/tmp``."""
    paths = {Path(sys.executable).resolve().parent.parent, Path(sys.base_prefix), Path(sys.prefix)}
    return sorted(paths)


class ConfinedSession:
    """``with ConfinedSession(spec) as session: run_logged(..., launcher=session.spawn)``."""

    def __init__(self, spec: SessionSpec) -> None:
        self.spec = spec
        self.survivors: list[Survivor] = []
        self._sock: socket.socket | None = None
        self._bwrap: subprocess.Popen[bytes] | None = None
        self._zygote_host_pid = 0
        self._current: ConfinedChild | None = None
        self._lock = threading.Lock()
        self._control_fd = -1

    # -- lifecycle -------------------------------------------------------------------------

    def argv(self) -> list[str]:
        source = inspect.getsource(zygote)
        inner = [sys.executable, "-I", "-S", "-B", "-c", source, str(self._control_fd)]
        line = wrap_argv(
            inner,
            writable=[self.spec.scratch],
            readable=[*self.spec.readable, *_python_readable()],
            cwd=self.spec.scratch,
            network=self.spec.network,
            hide=hidden_from_confined(checks=True),
        )
        cut = line.index("--chdir")
        extra = ["--clearenv", "--setenv", "PATH", os.environ.get("PATH", "/usr/bin:/bin")]
        extra += ["--setenv", "HOME", self.spec.home, "--unshare-ipc", "--unshare-uts"]
        return [*line[:cut], *extra, *line[cut:]]

    def start(self) -> ConfinedSession:
        if find_bwrap() is None:
            raise IsolationError("bubblewrap is not installed", fix="apt-get install bubblewrap")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self._control_fd = theirs.fileno()
        try:
            self._bwrap = subprocess.Popen(
                self.argv(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
            )
        except OSError as exc:
            ours.close()
            raise IsolationError(f"cannot start the judge's sandbox: {exc.strerror}") from None
        finally:
            theirs.close()
        self._sock = ours
        ours.settimeout(START_TIMEOUT_S)
        try:
            message, pid = self._receive()
        except (OSError, ValueError):
            message, pid = None, 0
        if message is None or message.get("op") != "ready":
            why = self._stop_bwrap()
            raise IsolationError(
                f"the judge's sandbox did not start: {why or 'no answer from it'}",
                fix="check that bubblewrap works here (uh-core adapter check), or run the "
                "gate unconfined with --isolation none (the run is then marked unconfined)",
            )
        ours.settimeout(None)
        self._zygote_host_pid = pid
        return self

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()  # the zygote kills what is left and exits; bwrap's init follows
        self._stop_bwrap()

    def _stop_bwrap(self) -> str:
        proc, self._bwrap = self._bwrap, None
        if proc is None:
            return ""
        try:
            _out, err = proc.communicate(timeout=_CLOSE_WAIT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, 9)
            _out, err = proc.communicate()
        return (err or b"").decode("utf-8", "replace").strip()[-500:]

    def __enter__(self) -> ConfinedSession:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- commands ----------------------------------------------------------------------------

    def spawn(
        self,
        argv: list[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin_file: Path | None,
        stdout: int,
        stderr: int,
        pass_fds: Sequence[int] = (),
    ) -> Child:
        """Start ``argv`` in the session (``uh_core.proc.spawn.spawn``'s contract); extra
        descriptors in ``pass_fds`` arrive in the command as 3, 4, …"""
        if self._sock is None:
            raise ProcError("the judge's sandbox is closed")
        if self._current is not None and self._current.returncode is None:
            raise ProcError("the judge's sandbox runs one command at a time")
        stdin = os.open(stdin_file or os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fds = [stdin, stdout, stderr, *pass_fds]
            request = {"op": "run", "argv": argv, "cwd": str(cwd), "env": dict(env)}
            payload = json.dumps(request).encode("utf-8")
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
            self._sock.sendmsg([payload], rights)
        except OSError as exc:
            raise ProcError(f"cannot reach the judge's sandbox: {exc.strerror}") from None
        finally:
            os.close(stdin)
        answer, _pid = self._receive()
        if answer is None:
            raise ProcError(f"the judge's sandbox ended: {self._stop_bwrap() or 'no message'}")
        if answer.get("op") == "failed":
            number = int(answer.get("errno") or 0)
            raise ProcError(f"cannot start {argv[0]!r} in {cwd}: {os.strerror(number)}")
        child = ConfinedChild(self, self._host_pid(int(answer["pid"])))
        self._current = child
        return child

    def _host_pid(self, inner: int) -> int:
        """The host pid of the zygote's child ``inner`` (its namespace pid)."""
        base = f"/proc/{self._zygote_host_pid}/task/{self._zygote_host_pid}/children"
        with contextlib.suppress(OSError):
            with open(base) as handle:
                candidates = [int(part) for part in handle.read().split()]
            for candidate in candidates:
                if _ns_pid(candidate) == inner:
                    return candidate
        # it has exited already (and was reaped): no host pid to signal; a pid that is
        # no process keeps the helper's pidfd and group signals harmless
        return GONE_PID

    def _exit_status(
        self, child: ConfinedChild, *, block: bool, timeout: float | None = None
    ) -> bool:
        with self._lock:
            if child.returncode is not None:
                return True
            if self._sock is None:
                child.returncode = -9
                return True
            self._sock.settimeout(timeout if block else 0.0)
            try:
                answer, _pid = self._receive()
            except (TimeoutError, BlockingIOError):
                return False
            finally:
                if self._sock is not None:
                    self._sock.settimeout(None)
            if answer is None:  # the session died under the command
                child.returncode = -9
                self.survivors.append(Survivor(0, "the judge's sandbox ended during a command"))
                return True
            for pid, argv in answer.get("survivors") or []:
                self.survivors.append(Survivor(int(pid), str(argv)))
            child.returncode = int(answer["status"])
            return True

    def _receive(self) -> tuple[dict[str, Any] | None, int]:
        """One message from the zygote, and the host pid of its sender."""
        assert self._sock is not None
        creds = socket.CMSG_SPACE(12)
        data, ancillary, _flags, _addr = self._sock.recvmsg(_MAX_MESSAGE, creds)
        pid = 0
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = int.from_bytes(payload[:4], sys.byteorder, signed=True)
        if not data:
            return None, pid
        message = json.loads(data)
        if not isinstance(message, dict):
            raise ValueError("not a message")
        return message, pid


def _ns_pid(host_pid: int) -> int:
    try:
        with open(f"/proc/{host_pid}/status", "rb") as handle:
            for line in handle:
                if line.startswith(b"NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError, IndexError):
        pass
    return 0
