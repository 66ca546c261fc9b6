"""Every ``uh-core`` command the dashboard starts, built and launched in one place.

The dashboard starts work only here and learns the outcome only from the event log (like
any other observer). What it does learn from the process itself is whether the launch
was refused — exit 2 (bad input), a program that would not start, or a crash — and then
it shows that error where the key was pressed.

``Launch.argv`` is the command as a person would type it (``uh-core verify ID --root R``);
``Launcher`` resolves ``uh-core`` to the installed script, or to this interpreter's
``-m uh_core`` when the script is not on PATH. Tests replace ``Launcher`` with a fake that
records ``argv`` (see ``tests/tui``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

PROGRAM = "uh-core"
_TAIL = 4096


@dataclass(frozen=True)
class Launch:
    """One command: what it is for (``action``), what it acts on (``target``), its argv."""

    action: str  # verify | run | run-all | harness | cancel | discard | promote
    target: str  # a mission id, a sandbox id, or "" (harness run: every pending mission)
    argv: tuple[str, ...]
    # exits that are outcomes (they arrive through the event log); any other is an error
    outcomes: tuple[int, ...] = (0, 1, 130)

    @property
    def title(self) -> str:
        return " ".join((self.action, self.target)).strip()

    @property
    def command(self) -> str:
        return " ".join(self.argv)


@dataclass(frozen=True)
class LaunchResult:
    launch: Launch
    returncode: int | None  # None: it never started
    error: str | None = None  # set when the launch was refused or broke
    message: str = ""  # the last line it printed (for the status line)

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


def discard(root: Path, sandbox_id: str) -> Launch:
    argv = (PROGRAM, "sandbox", "discard", sandbox_id, "--root", _root(root))
    return Launch("discard", sandbox_id, argv)


class LauncherLike(Protocol):
    def launch(self, launch: Launch) -> LaunchResult:
        """Start ``launch``, wait for it to end, and say how it went (blocks: call it from
        a worker thread)."""
        ...


def resolve(argv: tuple[str, ...]) -> list[str]:
    """The argv to execute: ``uh-core`` as installed, else ``python -m uh_core``."""
    if argv and argv[0] == PROGRAM:
        found = shutil.which(PROGRAM)
        head = [found] if found else [sys.executable, "-m", "uh_core"]
        return [*head, *argv[1:]]
    return list(argv)


def _last_line(handle: IO[bytes]) -> str:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(max(size - _TAIL, 0))
    text = handle.read().decode("utf-8", "replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def judge(launch: Launch, returncode: int, stdout: str, stderr: str) -> LaunchResult:
    """Which exits are the launch's own failure. Exit 1 is an outcome (failed, divergent,
    nothing to cancel), and outcomes arrive through the event log; exit 2 and anything
    else unexpected is an error to show in place."""
    if returncode in launch.outcomes:
        return LaunchResult(launch, returncode, None, stdout or stderr)
    error = stderr or stdout or f"{launch.argv[0]} exited with {returncode}"
    return LaunchResult(launch, returncode, f"{error} (exit {returncode})", stdout)


class Launcher:
    """Runs each launch as its own session (it outlives the dashboard, and a Ctrl-C in the
    dashboard never reaches it); output goes to temporary files, never to a pipe that
    could fill up while nobody reads it."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.env = env

    def launch(self, launch: Launch) -> LaunchResult:
        argv = resolve(launch.argv)
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                process = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                    env=self.env,
                )
            except OSError as exc:
                return LaunchResult(launch, None, f"cannot start {argv[0]}: {exc.strerror}")
            returncode = process.wait()
            return judge(launch, returncode, _last_line(out), _last_line(err))
