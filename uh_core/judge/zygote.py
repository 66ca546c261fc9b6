"""The starter inside a confined judge session: one small Python process, the first one
under bubblewrap's init, that starts each command the session is asked to run.

It is run as ``python -I -S -B -c <this file's source>``: the standard library only, no
site, no current directory on the path, nothing of the project under judgement imported.
It talks to uh over one ``SOCK_SEQPACKET`` socket, the descriptor named by its one
argument (``session.py``):

- uh sends ``{"op": "run", "argv", "cwd", "env", "fds"}`` with the command's descriptors
  (stdin, stdout, stderr, then any extra ones) attached as ``SCM_RIGHTS``;
- the zygote starts it with ``posix_spawn`` in a session of its own (the descriptors on
  0, 1, 2 and the extra ones on 3, 4, …), and answers ``{"op": "started", "pid"}`` or
  ``{"op": "failed", "errno", "error"}``;
- when the command ends, every other process still in the namespace (a daemon it left,
  a double fork, a new session) is named and killed — nothing outlives a command — and
  the zygote answers ``{"op": "exit", "status", "survivors": [[pid, argv], …]}``.

The zygote is a child subreaper, so orphans come back to it, and ``kill(-1, SIGKILL)`` in
a PID namespace reaches every process in it but its init and the caller. When uh closes
the socket (or dies), the zygote kills everything and exits; bubblewrap's init follows.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import json
import os
import select
import signal
import socket
import sys
import time

MAX_MESSAGE = 1 << 20
MAX_FDS = 16
SURVIVORS_LISTED = 50
PR_SET_CHILD_SUBREAPER = 36


def _send(sock: socket.socket, message: dict[str, object]) -> None:
    sock.send(json.dumps(message).encode("utf-8"))


def _receive(sock: socket.socket) -> tuple[dict[str, object] | None, list[int]]:
    fds = array.array("i")
    data, ancillary, _flags, _addr = sock.recvmsg(
        MAX_MESSAGE, socket.CMSG_SPACE(MAX_FDS * fds.itemsize), socket.MSG_CMSG_CLOEXEC
    )
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - (len(payload) % fds.itemsize)])
    if not data:
        return None, list(fds)
    return json.loads(data), list(fds)


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            raw = handle.read(800)
    except OSError:
        return "?"
    text = " ".join(raw.decode("utf-8", "replace").split("\0")).strip()
    return text[:200] or "?"


def _others() -> list[int]:
    """Every process of the namespace but its init and this zygote (zombies left out)."""
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in (1, me):
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[-1].split()[0]
        except (OSError, IndexError):
            continue
        if state != b"Z":
            found.append(int(name))
    return found


def _reap_all() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _kill_everything() -> list[list[object]]:
    """Name and kill every other process in the namespace, until none is left."""
    named: dict[int, str] = {}
    deadline = time.monotonic() + 10.0
    while True:
        others = _others()
        if not others:
            break
        for pid in others:
            if pid not in named and len(named) < SURVIVORS_LISTED:
                named[pid] = _cmdline(pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        _reap_all()
        if time.monotonic() > deadline:  # stuck in the kernel: reported, not waited on
            break
        time.sleep(0.002)
    _reap_all()
    return [[pid, argv] for pid, argv in named.items()]


def _spawn(request: dict[str, object], fds: list[int]) -> int:
    argv = [str(part) for part in request["argv"]]  # type: ignore[attr-defined]
    env = {str(k): str(v) for k, v in request["env"].items()}  # type: ignore[attr-defined]
    os.chdir(str(request["cwd"]))
    actions: list[tuple[object, ...]] = []
    for target, fd in enumerate(fds):
        actions.append((os.POSIX_SPAWN_DUP2, fd, target))
    defaults = [signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM]
    spawn = os.posix_spawn if os.sep in argv[0] else os.posix_spawnp
    return spawn(argv[0], argv, env, file_actions=actions, setsid=True, setsigdef=defaults)


def _wait(sock: socket.socket, pid: int) -> int | None:
    """The command's exit status (as ``waitstatus_to_exitcode``); None if uh went away."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            ready, _, _ = select.select([pidfd, sock.fileno()], [], [])
            if pidfd in ready:
                _done, status = os.waitpid(pid, 0)
                return os.waitstatus_to_exitcode(status)
            if sock.fileno() in ready:
                peek = sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                if not peek:
                    return None
                # uh asks nothing during a run: drop what it sent
                sock.recv(MAX_MESSAGE)
    finally:
        os.close(pidfd)


def main() -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # uh ends the session by closing the socket
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    control = int(sys.argv[1])
    os.set_inheritable(control, False)
    sock = socket.socket(fileno=control)
    os.makedirs(os.environ.get("HOME", "/tmp/home"), exist_ok=True)
    _send(sock, {"op": "ready", "pid": os.getpid()})
    while True:
        request, fds = _receive(sock)
        if request is None:
            break
        try:
            pid = _spawn(request, fds)
        except OSError as exc:
            _send(sock, {"op": "failed", "errno": exc.errno or 0, "error": str(exc)})
            continue
        finally:
            for fd in fds:
                os.close(fd)
        _send(sock, {"op": "started", "pid": pid})
        status = _wait(sock, pid)
        survivors = _kill_everything()
        if status is None:
            break
        _send(sock, {"op": "exit", "status": status, "survivors": survivors})
    _kill_everything()
    return 0


if __name__ == "__main__":
    sys.exit(main())
