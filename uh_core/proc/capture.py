"""Short commands (git plumbing) with their output captured in memory."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from uh_core.errors import ProcError
from uh_core.proc.group import DEFAULT_GRACE_S, stop_group
from uh_core.proc.result import Captured
from uh_core.proc.spawn import job_signals_preexec
from uh_core.proc.start import full_env


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
    env_is_complete: bool = False,
    timeout: float | None = 120,
    stdin: bytes | None = None,
    grace: float = DEFAULT_GRACE_S,
) -> Captured:
    """Run a short command (git plumbing) and capture its output in memory.

    ``env`` is added to this process's environment, or is the whole environment with
    ``env_is_complete`` (the engine's git commands drop inherited git variables)."""
    try:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=dict(env) if env_is_complete and env is not None else full_env(env),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
            preexec_fn=job_signals_preexec(),
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
