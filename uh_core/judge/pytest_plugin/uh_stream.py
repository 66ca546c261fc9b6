"""uh's results stream: each test's outcome, sent to uh the moment pytest reports it.

Loaded into the gate's test run through ``PYTEST_PLUGINS=uh_stream`` (this folder is put
on ``PYTHONPATH``); standard library only, nothing of uh imported. It writes one JSON line
per report to the descriptor named by ``UH_RESULT_FD`` — a pipe whose other end uh reads
while the tests run — and closes it when pytest unconfigures, so what the process under
test does afterwards (an exit handler rewriting the JUnit report, a forced exit status)
cannot reach what uh already read. Both variables are removed from the environment at once,
so a pytest started by the tests does not write into this stream.

What a line holds: ``{"e": "start"}``, ``{"e": "test", "id", "when", "outcome"}``,
``{"e": "finish", "status"}``. Code imported into the same process can still write lies
into the descriptor while it is open: docs/security.md says what that means.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

_FD: list[int] = []


def _send(message: dict[str, Any]) -> None:
    if not _FD:
        return
    data = (json.dumps(message) + "\n").encode("utf-8", "replace")
    try:
        while data:
            data = data[os.write(_FD[0], data) :]
    except OSError:
        _FD.clear()


def pytest_configure(config: Any) -> None:
    raw = os.environ.pop("UH_RESULT_FD", None)
    os.environ.pop("PYTEST_PLUGINS", None)
    if raw is None or _FD or hasattr(config, "workerinput"):  # xdist workers: see below
        return
    try:
        fd = int(raw)
        os.set_inheritable(fd, False)
    except (ValueError, OSError):
        return
    _FD.append(fd)
    _send({"e": "start", "pid": os.getpid()})


def pytest_runtest_logreport(report: Any) -> None:
    # with xdist, the controller receives every worker's reports through this same hook
    _send({"e": "test", "id": report.nodeid, "when": report.when, "outcome": report.outcome})


def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    _send({"e": "finish", "status": int(exitstatus)})


def pytest_unconfigure(config: Any) -> None:
    if _FD:
        fd = _FD.pop()
        with contextlib.suppress(OSError):
            os.close(fd)
