"""The results stream of a test run, and whether the evidence agrees with it.

The JUnit report is a file the process under test can write, and rewrite after pytest is
done (an exit handler), and its exit status is whatever it ends with. So while the tests
run, uh also reads each test's outcome over a pipe (``pytest_plugin/uh_stream.py``) the
moment pytest reports it: the stream is closed when pytest unconfigures, before any exit
handler runs. The exit status, the stream and the report must then agree; where they do
not, the evidence was tampered with, and ``disagreements`` names how.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path

from uh_core.judge.room import PLUGIN_DIR

STREAM_MAX_BYTES = 64 * 1024 * 1024
RESULT_FD = 3  # where the pipe arrives in the test command (its first extra descriptor)
CODE = "evidence_tampered"


@dataclass
class Session:
    """One pytest session as the stream told it."""

    outcomes: dict[str, str] = field(default_factory=dict)  # test id → its outcome
    status: int | None = None  # pytest's exit status; None: it never finished

    def record(self, test_id: str, when: str, outcome: str) -> None:
        now = self.outcomes.get(test_id)
        if outcome == "failed":
            self.outcomes[test_id] = "failed" if when == "call" else now or "error"
            if when != "call" and now in ("passed", "skipped"):
                self.outcomes[test_id] = "error"
        elif outcome == "skipped" and now is None:
            self.outcomes[test_id] = "skipped"
        elif outcome == "passed" and when == "call" and now is None:
            self.outcomes[test_id] = "passed"

    def counts(self) -> dict[str, int]:
        values = list(self.outcomes.values())
        return {s: values.count(s) for s in ("passed", "failed", "error", "skipped")}


class ResultStream:
    """A pipe the test command writes its results to, read into ``log`` as they come."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.sessions: list[Session] = []
        self.truncated = False
        self._read, self._write = os.pipe()
        self._thread = threading.Thread(target=self._pump, name="uh-results", daemon=True)
        self._thread.start()

    def env(self, base: dict[str, str]) -> dict[str, str]:
        path = base.get("PYTHONPATH")
        plugin = str(PLUGIN_DIR)
        return {
            **base,
            "UH_RESULT_FD": str(RESULT_FD),
            "PYTEST_PLUGINS": "uh_stream",
            "PYTHONPATH": f"{plugin}{os.pathsep}{path}" if path else plugin,
        }

    @property
    def pass_fds(self) -> tuple[int]:
        return (self._write,)

    def started(self, _pid: int = 0) -> None:
        """The command holds its end now: ours is closed, so its exit ends the stream."""
        if self._write >= 0:
            os.close(self._write)
            self._write = -1

    def finish(self, timeout: float = 10.0) -> list[Session]:
        self.started()
        self._thread.join(timeout)
        if self._thread.is_alive():  # a survivor holds the pipe: it was stopped; stop reading
            with contextlib.suppress(OSError):
                os.close(self._read)
            self._thread.join(1.0)
        return self.sessions

    def _pump(self) -> None:
        pending = b""
        size = 0
        try:
            with open(self.log, "wb") as out:
                while True:
                    try:
                        data = os.read(self._read, 65536)
                    except OSError:
                        break
                    if not data:
                        break
                    size += len(data)
                    if size > STREAM_MAX_BYTES:
                        self.truncated = True
                        continue
                    out.write(data)
                    pending += data
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        self._take(line)
        finally:
            with contextlib.suppress(OSError):
                os.close(self._read)

    def _take(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        kind = message.get("e")
        if kind == "start":
            self.sessions.append(Session())
        elif kind == "test" and self.sessions:
            self.sessions[-1].record(
                str(message.get("id")), str(message.get("when")), str(message.get("outcome"))
            )
        elif kind == "finish" and self.sessions and isinstance(message.get("status"), int):
            self.sessions[-1].status = message["status"]


_ASSIGNED = re.compile(r"(?<![\w$])PYTHONPATH=(\"[^\"]*\"|'[^']*'|[^\s;&|]*)")


def with_plugin_path(command: str) -> str:
    """``command`` with uh's plugin folder added to every ``PYTHONPATH=…`` it assigns itself
    (``PYTHONPATH=src pytest`` would otherwise hide the folder ``env`` puts there)."""
    plugin = str(PLUGIN_DIR)

    def add(match: re.Match[str]) -> str:
        value = match.group(1)
        if value[:1] in ("'", '"'):
            return f"PYTHONPATH={value[:-1]}{os.pathsep}{plugin}{value[-1]}"
        return f"PYTHONPATH={value}{os.pathsep}{plugin}" if value else f"PYTHONPATH={plugin}"

    return _ASSIGNED.sub(add, command)


def disagreements(
    sessions: list[Session], report_counts: dict[str, int] | None, exit_code: int | None
) -> list[str]:
    """How the exit status, the stream and the JUnit report disagree ([] when they agree).

    ``report_counts`` is None when no report was read. A run with neither a report nor a
    stream (a test command that is not pytest) has nothing to compare here."""
    problems: list[str] = []
    last = sessions[-1] if sessions else None
    if report_counts is not None and last is None:
        problems.append(
            "a JUnit report was written but pytest's results stream was silent "
            "(uh's stream plugin disabled, or the report written by something else)"
        )
        return problems
    if last is None:
        return problems
    if last.status is None:
        problems.append("pytest's results stream ended before the session finished")
    streamed = last.counts()
    bad = streamed["failed"] + streamed["error"]
    if report_counts is not None:
        reported_bad = report_counts.get("failed", 0) + report_counts.get("error", 0)
        if (report_counts.get("passed", 0), reported_bad) != (streamed["passed"], bad):
            problems.append(
                f"the JUnit report says {report_counts.get('passed', 0)} passed and "
                f"{reported_bad} failed, the results stream said {streamed['passed']} passed "
                f"and {bad} failed as the tests ran"
            )
    if exit_code == 0 and (bad or (last.status not in (None, 0, 5))):
        problems.append(
            f"the test command ended with exit status 0, but pytest reported {bad} failed "
            f"(exit status {last.status}) as the tests ran"
        )
    return problems
