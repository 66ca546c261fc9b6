"""Every ``uh-core`` command the dashboard starts, built and launched in one place.

The dashboard starts work only here and learns the outcome only from the event log (like
any other observer). What it does learn from the process itself is whether the launch
was refused — exit 2 (bad input), a program that would not start, or a crash — and then
it shows that error where the key was pressed; and what it printed, which the message log
(``m``) keeps in full.

``Launch.argv`` is the command as a person would type it (``uh-core verify ID --root R``);
``Launcher`` resolves ``uh-core`` to the installed script, or to this interpreter's
``-m uh_core`` when the script is not on PATH. Tests replace ``Launcher`` with a fake that
records ``argv`` (see ``tests/tui``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from uh_tui import look

PROGRAM = "uh-core"
_TAIL = 4096
MAX_OUTPUT = 1 << 20  # bytes of a command's stdout (and of its stderr) kept for the log


@dataclass(frozen=True)
class Launch:
    """One command: what it is for (``action``), what it acts on (``target``), its argv."""

    # verify | run | run-all | harness | cancel | harness-cancel | discard | promote | answer
    # | steer
    action: str
    target: str  # a mission, sandbox or harness run id, or "" (every pending mission)
    argv: tuple[str, ...]
    # exits that are outcomes (they arrive through the event log); any other is an error
    outcomes: tuple[int, ...] = (0, 1, 130)
    label: str = ""  # how the status line names it, when not "<action> <target>"

    @property
    def title(self) -> str:
        return self.label or " ".join((self.action, self.target)).strip()

    @property
    def command(self) -> str:
        return " ".join(self.argv)


@dataclass(frozen=True)
class LaunchResult:
    launch: Launch
    returncode: int | None  # None: it never started, or it was left running
    error: str | None = None  # set when the launch was refused or broke
    message: str = ""  # the last line it printed (for the status line)
    stdout: str = ""  # everything it printed (for the message log)
    stderr: str = ""
    detached: bool = False  # the app quit and left it running

    @property
    def ok(self) -> bool:
        return self.error is None


def _root(root: Path) -> str:
    return str(root)


def verify(root: Path, mission_id: str) -> Launch:
    return Launch("verify", mission_id, (PROGRAM, "verify", mission_id, "--root", _root(root)))


def run(root: Path, mission_id: str, runtime: str) -> Launch:
    argv = (PROGRAM, "mission", "run", mission_id, "--runtime", runtime, "--root", _root(root))
    return Launch("run", mission_id, argv)


def run_all(root: Path, mission_id: str) -> Launch:
    argv = (PROGRAM, "mission", "run-all", mission_id, "--root", _root(root))
    return Launch("run-all", mission_id, argv)


def harness_run(root: Path, *extra: str) -> Launch:
    return Launch("harness", "", (PROGRAM, "harness", "run", *extra, "--root", _root(root)))


def cancel(root: Path, mission_id: str) -> Launch:
    argv = (PROGRAM, "mission", "cancel", mission_id, "--root", _root(root))
    return Launch("cancel", mission_id, argv)


def harness_cancel(root: Path, run_id: str | None) -> Launch:
    """``uh-core harness cancel [RUN_ID]``: exit 0 cancelled, 1 nothing was running. Without
    a run id (one just launched, not in the audit log yet) the one running."""
    argv = (PROGRAM, "harness", "cancel", *((run_id,) if run_id else ()), "--root", _root(root))
    label = f"cancel harness run {run_id}" if run_id else "cancel the harness run"
    return Launch("harness-cancel", run_id or "harness-cancel", argv, label=label)


def promote(
    root: Path,
    mission_id: str,
    source: tuple[str, ...],
    decision: str,
    approver: str,
    *,
    force: bool = False,
    note: str = "",
) -> Launch:
    """``uh-core promote``: exit 1 is a refusal (dirty tree, conflict, not verified) that
    writes nothing, so it is shown in place like any error."""
    argv = [PROGRAM, "promote", mission_id, *source, "--decision", decision]
    argv += ["--approved-by", approver]
    if force:
        argv.append("--force")
    if note:
        argv += ["--note", note]
    argv += ["--root", _root(root)]
    return Launch("promote", mission_id, tuple(argv), outcomes=(0, 130))


def answer(root: Path, mission_id: str, text: str) -> Launch:
    """``uh-core harness answer ID TEXT``: exit 0 recorded; 2 refused (nothing written)."""
    argv = (PROGRAM, "harness", "answer", mission_id, text, "--root", _root(root))
    return Launch("answer", mission_id, argv, outcomes=(0,), label=f"answer {mission_id}")


def steer(root: Path, mission_id: str, text: str, runtime: str | None = None) -> Launch:
    """``uh-core mission steer ID TEXT [--runtime R]``: exit 0 sent; 2 refused (nothing
    written)."""
    which = ("--runtime", runtime) if runtime else ()
    argv = (PROGRAM, "mission", "steer", mission_id, text, *which, "--root", _root(root))
    return Launch("steer", mission_id, argv, outcomes=(0,), label=f"steer {mission_id}")


def discard(root: Path, sandbox_id: str) -> Launch:
    argv = (PROGRAM, "sandbox", "discard", sandbox_id, "--root", _root(root))
    return Launch("discard", sandbox_id, argv)


class LauncherLike(Protocol):
    def launch(self, launch: Launch) -> LaunchResult:
        """Start ``launch``, wait for it to end, and say how it went (blocks: call it from
        a worker thread). Returns early, ``detached``, once ``release`` is called."""
        ...

    def release(self, *, cancel: bool) -> None:
        """The app quits: every ``launch`` still waiting returns at once. With ``cancel``
        each running command is interrupted first (as Ctrl-C would); without, it goes on
        by itself (it is its own session) and the next ``uh`` follows it in the logs."""
        ...


def resolve(argv: tuple[str, ...]) -> list[str]:
    """The argv to execute: ``uh-core`` as installed, else ``python -m uh_core``."""
    if argv and argv[0] == PROGRAM:
        found = shutil.which(PROGRAM)
        head = [found] if found else [sys.executable, "-m", "uh_core"]
        return [*head, *argv[1:]]
    return list(argv)


def _read(handle: IO[bytes]) -> str:
    """What a command printed: all of it up to ``MAX_OUTPUT`` bytes, then its end."""
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(0)
    if size <= MAX_OUTPUT:
        return handle.read().decode("utf-8", "replace")
    head = handle.read(MAX_OUTPUT // 2).decode("utf-8", "replace")
    handle.seek(size - MAX_OUTPUT // 2)
    tail = handle.read().decode("utf-8", "replace")
    return f"{head}\n… {look.plural(size - MAX_OUTPUT, 'byte')} cut …\n{tail}"


def last_line(text: str) -> str:
    lines = [line.strip() for line in text[-_TAIL:].splitlines() if line.strip()]
    return lines[-1] if lines else ""


def judge(launch: Launch, returncode: int, stdout: str, stderr: str) -> LaunchResult:
    """Which exits are the launch's own failure. Exit 1 is an outcome (failed, divergent,
    nothing to cancel), and outcomes arrive through the event log; exit 2 and anything
    else unexpected is an error to show in place. ``stdout``/``stderr`` are everything it
    printed; the status line gets the last line, the message log all of it."""
    out, err = last_line(stdout), last_line(stderr)
    if returncode in launch.outcomes:
        return LaunchResult(launch, returncode, None, out or err, stdout, stderr)
    error = err or out or f"{launch.argv[0]} exited with {returncode}"
    return LaunchResult(launch, returncode, f"{error} (exit {returncode})", out, stdout, stderr)


# Each command starts with these at their defaults: SIGINT (a uh started as a background
# job inherits it ignored, and a cancel must still interrupt), SIGPIPE and SIGXFSZ (Python
# ignores them).
_DEFAULT_SIGNALS = tuple(
    s
    for s in (signal.SIGINT, getattr(signal, "SIGPIPE", None), getattr(signal, "SIGXFSZ", None))
    if s is not None
)


class Launcher:
    """Runs each launch as its own session (``setsid``: it outlives the dashboard when the
    operator quits and leaves it running, and no signal meant for the dashboard reaches
    it); output goes to temporary files, never to a pipe that could fill up while nobody
    reads it. Waiting is a poll every ``poll_s`` so that quitting never waits for it."""

    def __init__(self, env: dict[str, str] | None = None, poll_s: float = 0.05) -> None:
        self.env = env
        self.poll_s = poll_s
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._running: dict[int, Launch] = {}  # pid → launch

    @property
    def pids(self) -> list[int]:
        with self._lock:
            return list(self._running)

    def release(self, *, cancel: bool) -> None:
        with self._lock:
            running = list(self._running)
            self._released.set()
        if cancel:
            for pid in running:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGINT)  # its session's group: as Ctrl-C would

    def launch(self, launch: Launch) -> LaunchResult:
        argv = resolve(launch.argv)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                pid = _spawn(argv, self.env, out.fileno(), err.fileno())
            except OSError as exc:
                return LaunchResult(launch, None, f"cannot start {argv[0]}: {exc.strerror}")
            with self._lock:
                self._running[pid] = launch
            try:
                returncode = self._wait(pid)
            finally:
                with self._lock:
                    self._running.pop(pid, None)
            if returncode is None:
                return LaunchResult(launch, None, None, "left running", detached=True)
            return judge(launch, returncode, _read(out), _read(err))

    def _wait(self, pid: int) -> int | None:
        """Its exit code, or None once the app is released (it goes on unwatched)."""
        while True:
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # reaped by someone else (SIGCHLD ignored)
                return 255
            if done:
                return os.waitstatus_to_exitcode(status)
            if self._released.wait(self.poll_s):
                return None


def _spawn(argv: list[str], env: dict[str, str] | None, stdout: int, stderr: int) -> int:
    """Start ``argv`` in a new session with stdin from /dev/null; its pid."""
    return os.posix_spawnp(
        argv[0],
        argv,
        os.environ if env is None else env,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, stdout, 1),
            (os.POSIX_SPAWN_DUP2, stderr, 2),
        ],
        setsid=True,
        setsigdef=_DEFAULT_SIGNALS,
    )
