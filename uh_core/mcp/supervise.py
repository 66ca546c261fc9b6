"""The supervisor of one background run of ``uh-core mcp`` (``runs.py``): the standard
library only (and ``uh_core.clock``, which is too), so it starts in a few milliseconds.

``python -m uh_core.mcp.supervise RECORD -- ARGV…``: the session leader of the run. It starts
ARGV (``uh-core … --json``) in its own process group with its output in ``RECORD``'s
``.out`` and ``.err`` files, writes the child's pid into the record, waits, and writes how
it ended (``exit_code``, or ``signal``, and ``finished_at``), so every server for the same
root — not only the one that started it — can report and cancel it, also after that server
has gone. SIGINT (how a run is cancelled, sent to the whole group) is the child's: this
process ignores it; SIGTERM and SIGHUP are passed on to the child.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from uh_core.clock import timestamp  # the standard library only, as this module


def update(record: Path, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Read, change and rewrite ``record`` whole, under its lock (servers append cancels)."""
    with open(f"{record}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data: dict[str, Any] = json.loads(record.read_text(encoding="utf-8"))
        change(data)
        temporary = record.with_name(f".{record.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        os.replace(temporary, record)
        return data


def main(argv: list[str]) -> int:
    record = Path(argv[0])
    command = argv[2:] if argv[1:2] == ["--"] else argv[1:]
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = record.with_suffix(".out")
    err = record.with_suffix(".err")
    with open(out, "ab") as stdout, open(err, "ab") as stderr:
        try:
            child = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
            )  # fmt: skip
        except OSError as exc:
            said = f"cannot start {command[0]}: {exc.strerror}"
            update(record, lambda d: d.update(exit_code=127, error=said, finished_at=timestamp()))
            return 127
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda number, _frame: _pass_on(child, number))
    update(record, lambda d: d.update(child_pid=child.pid))
    code = child.wait()

    def ended(data: dict[str, Any]) -> None:
        data["finished_at"] = timestamp()
        if code < 0:
            data["signal"] = signal.Signals(-code).name
        else:
            data["exit_code"] = code

    update(record, ended)
    return code if code >= 0 else 128 - code


def _pass_on(child: subprocess.Popen[bytes], number: int) -> None:
    with contextlib.suppress(OSError):
        child.send_signal(number)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
