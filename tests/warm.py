"""A warm ``uh-core`` for the tests: one server per test process that has imported the engine
once, and forks a real process for each command a test runs (``Repo.uh``).

Most of what ``uh-core`` costs a test is starting: the interpreter, pydantic and the engine's
modules, a third of a second of CPU on a 2-core machine, paid again by every one of some 800
commands in a whole run. The server pays it once. Each command still runs in a process of
its own, with its own pid, working directory, environment, standard streams and exit
status, through the same ``uh_core.cli.main.main`` that ``python -m uh_core`` calls; it
only skips the imports. What a fresh interpreter does at start that a fork does not (the
streams made for the new descriptors, ``sys.path[0]`` set to the working directory, the
time zone read from the environment) the child does itself.

What this can hide is an import a module forgot (it works here because another module
imported it first). Every test that starts ``uh-core`` with ``Repo.start``, the MCP tests,
the demo, the dashboard's launches and the end-to-end tests start it cold, as a user does;
``UH_TEST_COLD=1`` makes ``Repo.uh`` cold too.

Protocol, over a ``SOCK_SEQPACKET`` pair: the test sends ``{"argv", "cwd", "env"}`` with four
descriptors attached (``SCM_RIGHTS``): the command's stdin, stdout and stderr, and one end of
a socket pair of the command's own, on which the server answers ``{"pid"}`` at once and
``{"status"}`` (a ``waitpid`` status) when the command ends. Commands run side by side: a
test's threads may each run one.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from uh_core.judge.zygote import MAX_MESSAGE
from uh_core.judge.zygote import _receive as receive  # the judge's zygote speaks the same way

ROOT = Path(__file__).resolve().parents[1]
# The server's own environment: the test process's as the session started (tests/conftest.py
# imports this module then), never a test's. A server started by a test inside its
# monkeypatches would carry them for the rest of the session, and a test that looks for live
# processes by a marker in their environment would find the server (each command gets its
# test's environment at the call, whatever the server's).
START_ENV = dict(os.environ)


# What a command imports at start (the parser imports every command module); the rest stays
# lazy, as it is for a user.
PRELOAD = (
    "uh_core.models.events",
    "uh_core.models.mission",
    "uh_core.models.verification",
    "uh_core.models.ledger",
    "uh_core.workspace.store",
    "uh_core.verify.runner",
    "uh_core.harness.preflight",
    "uh_core.harness.loop",
    "uh_core.promote.journal",
)


def _build_models() -> None:
    """Build every imported model's validator now, once. The engine's models defer that to
    their first use (``defer_build``: a command pays only for the models it touches), so
    each forked command built them again: 0.05-0.1 s of CPU per harness run. A built model
    validates exactly as a lazily built one; a cold process still builds them lazily."""
    from pydantic import BaseModel

    pending: list[type[BaseModel]] = [BaseModel]
    while pending:
        for model in pending.pop().__subclasses__():
            pending.append(model)
            if model.__module__.startswith("uh_core.") and not model.__pydantic_complete__:
                model.model_rebuild()


def serve(control_fd: int) -> None:
    """The server: import, then fork one child per request until the test process goes."""
    import importlib

    from uh_core.cli.main import build_parser

    build_parser()
    for name in PRELOAD:
        importlib.import_module(name)
    _build_models()
    control = socket.socket(fileno=control_fd)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, None)
    while True:
        for key, _ in selector.select():
            if key.data is None:
                request, fds = receive(control)
                if request is None:
                    return  # the test process closed its end
                reply = socket.socket(fileno=fds.pop())
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    control.close()
                    reply.close()
                    _child(request, fds)  # never returns
                for fd in fds:
                    os.close(fd)
                pidfd = os.pidfd_open(pid)
                selector.register(pidfd, selectors.EVENT_READ, (pid, reply))
                with contextlib.suppress(OSError):
                    reply.send(json.dumps({"pid": pid}).encode())
            else:
                pid, reply = key.data
                selector.unregister(key.fd)
                os.close(key.fd)
                _, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):
                    reply.send(json.dumps({"status": status}).encode())
                reply.close()


def _child(request: dict[str, object], fds: list[int]) -> None:
    """In the forked child: become the command a fresh ``python -m uh_core`` would be."""
    import atexit
    import io
    import threading
    import time
    import traceback

    code = 1
    try:
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)  # dup2 clears close-on-exec on the copy
        for fd in fds:
            os.close(fd)
        cwd = str(request["cwd"])
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(dict(request["env"]))  # type: ignore[arg-type]
        time.tzset()
        sys.path[0] = cwd
        sys.argv = [str(a) for a in request["argv"]]  # type: ignore[union-attr]
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
        sys.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=os.isatty(1)
        )
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False),
            encoding="utf-8",
            errors="backslashreplace",
            line_buffering=True,
        )
        from uh_core.cli.main import main

        try:
            main()
            code = 0
        except SystemExit as exc:
            if exc.code is None:
                code = 0
            elif isinstance(exc.code, int):
                code = exc.code
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:
            traceback.print_exc()
            code = 130
        except BaseException:
            traceback.print_exc()
            code = 1
        threading._shutdown()  # type: ignore[attr-defined]  # as the interpreter's exit does
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code & 0xFF)


class Warm:
    """The test process's side: start the server once, run commands through it."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.server = subprocess.Popen(
            [sys.executable, "-m", "tests.warm", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            cwd=ROOT,
            env=START_ENV,
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        self.control = ours

    def close(self) -> None:
        self.control.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.server.wait(timeout=5)

    def run(
        self, argv: list[str], cwd: Path, timeout: float | None
    ) -> subprocess.CompletedProcess[str]:
        """As ``subprocess.run(argv, cwd=cwd, capture_output=True, text=True,
        stdin=DEVNULL, timeout=timeout)`` would, for ``python -m uh_core`` + ``argv[1:]``."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        devnull = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        reply, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        request = {"argv": argv, "cwd": str(cwd), "env": dict(os.environ)}
        try:
            fds = array.array("i", [devnull, out_w, err_w, theirs.fileno()])
            self.control.sendmsg(
                [json.dumps(request).encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)]
            )
        finally:
            for fd in (devnull, out_w, err_w):
                os.close(fd)
            theirs.close()
        with reply, os.fdopen(out_r, "rb") as out, os.fdopen(err_r, "rb") as err:
            return self._collect(argv, reply, out, err, timeout)

    def _collect(self, argv, reply, out, err, timeout):  # type: ignore[no-untyped-def]
        deadline = None if timeout is None else time.monotonic() + timeout
        chunks: dict[int, list[bytes]] = {out.fileno(): [], err.fileno(): []}
        selector = selectors.DefaultSelector()
        for stream in (out, err):
            selector.register(stream.fileno(), selectors.EVENT_READ)
        selector.register(reply.fileno(), selectors.EVENT_READ)
        pid = status = None
        with selector:
            while len(selector.get_map()) > 0:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    if pid is not None:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
                    raise subprocess.TimeoutExpired(argv, timeout or 0)
                for key, _ in selector.select(left):
                    if key.fd == reply.fileno():
                        data = reply.recv(MAX_MESSAGE)
                        if not data:
                            selector.unregister(key.fd)
                            if status is None:
                                raise RuntimeError("the warm uh-core server went away")
                            continue
                        message = json.loads(data)
                        pid = message.get("pid", pid)
                        status = message.get("status", status)
                        continue
                    data = os.read(key.fd, 65536)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        selector.unregister(key.fd)
        assert status is not None
        return subprocess.CompletedProcess(
            argv,
            os.waitstatus_to_exitcode(status),
            b"".join(chunks[out.fileno()]).decode("utf-8"),
            b"".join(chunks[err.fileno()]).decode("utf-8"),
        )


_WARM: Warm | None = None
_WARM_LOCK = threading.Lock()


def warm() -> Warm | None:
    """This test process's server, started on first use; None with ``UH_TEST_COLD=1``."""
    global _WARM
    if os.environ.get("UH_TEST_COLD") == "1":
        return None
    with _WARM_LOCK:
        if _WARM is None or _WARM.server.poll() is not None:
            _WARM = Warm()
        return _WARM


def close() -> None:
    global _WARM
    with _WARM_LOCK:
        if _WARM is not None:
            _WARM.close()
            _WARM = None


if __name__ == "__main__":
    serve(int(sys.argv[1]))
