"""Suite non-regression: every test that passed at the base commit must, after the attempt,
still be collected and pass — not deleted, not skipped, not xfailed, not deselected, not
failing. The one exception is a test the mission retires by id (``retire_tests:``).

The base's results come from running the same test command at the base commit in a clean
checkout of it (a repository borrowing the operator's objects, like a sandbox, outside the
work tree, removed afterwards), with a JUnit report. They are cached per (base commit, test
command) in the repository's state folder, so a harness run over ten missions from one
HEAD pays for one base run. The cache is written only by uh, under a lock, whole.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from uh_core.errors import UhError
from uh_core.fileio import write_json
from uh_core.git import common_dir
from uh_core.isolation.bwrap import Resolved
from uh_core.judge.room import open_room
from uh_core.judge.testreports import ReportedCase, parse_report, selects, with_junit_report
from uh_core.layout import Layout
from uh_core.proc import run_logged
from uh_core.yamllimits import read_json

CODE = "suite_regression"
CACHE_VERSION = 1


@dataclass(frozen=True)
class BaseCase:
    status: str  # passed | failed | error | skipped | xfailed
    aliases: tuple[str, ...]


@dataclass(frozen=True)
class BaseRun:
    cases: dict[str, BaseCase]  # dotted id → its result at the base commit
    cached: bool
    problem: str | None = None  # why there are no base results to compare with
    duration_ms: int = 0


def status_of(case: ReportedCase) -> str:
    return "xfailed" if case.xfail else case.status


def cache_file(layout: Layout, base_commit: str, command: str) -> Path:
    key = hashlib.sha256(command.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return layout.state_dir / "base-results" / f"{base_commit}-{key}.json"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _read(path: Path, base_commit: str, command: str) -> BaseRun | None:
    try:
        data = read_json(path)
        if data.get("version") != CACHE_VERSION or data.get("base_commit") != base_commit:
            return None
        if data.get("command") != command:
            return None
        cases = {
            name: BaseCase(str(item["status"]), tuple(item.get("aliases", ())))
            for name, item in data["cases"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # absent or not ours: run again
    return BaseRun(cases, cached=True, duration_ms=int(data.get("duration_ms", 0)))


def base_results(
    layout: Layout,
    base_commit: str,
    command: str,
    env: Mapping[str, str],
    timeout: float,
    *,
    isolation: Resolved,
    check_env_names: Iterable[str] = (),
    cached: bool = True,
    what: str = "the base commit",
    tree: Callable[[], str] | None = None,
) -> BaseRun:
    """The base commit's results for ``command`` (cached, or run now in a pristine room of
    the base commit, confined as the agent's own tests are). ``cached=False``: run now,
    whatever the cache says (what is run is cached again). ``base_commit`` names what runs
    in the cache; ``tree``, when given, makes the tree that runs, only when it must run
    (fail-to-pass: the base's source and the judged commit's tests, judge/failtopass.py);
    ``what`` names it in a problem."""
    path = cache_file(layout, base_commit, command)
    found = _read(path, base_commit, command) if cached else None
    if found is not None:
        return found
    with _locked(path):
        found = _read(path, base_commit, command) if cached else None  # run meanwhile
        if found is not None:
            return found
        return _run(
            layout, path, base_commit, command, env, timeout, isolation, check_env_names, what,
            tree() if tree is not None else base_commit,
        )  # fmt: skip


def _run(
    layout: Layout,
    path: Path,
    base_commit: str,
    command: str,
    env: Mapping[str, str],
    timeout: float,
    isolation: Resolved,
    check_env_names: Iterable[str],
    what: str,
    tree: str,
) -> BaseRun:
    started = time.monotonic()
    try:
        with open_room(
            layout, common_dir(layout.root), tree, isolation,
            label=f"base-{tree[:12]}", check_env_names=check_env_names,
        ) as room:  # fmt: skip
            junit = room.out / "junit.xml"
            line, has_pytest = with_junit_report(command, junit)
            if not has_pytest:
                return BaseRun({}, False, "the test command runs no pytest: no report of the base")
            done = run_logged(
                line,
                cwd=room.checkout,
                stdout_log=room.out / "stdout.log",
                stderr_log=room.out / "stderr.log",
                env={**room.env, **env, "UH_ROOT": str(room.checkout)},
                env_is_complete=True,
                timeout=timeout,
                launcher=room.launcher(),
            )
            if done.timed_out or not junit.is_file():
                why = "timed out" if done.timed_out else f"wrote no report (exit {done.exit_code})"
                return BaseRun({}, False, f"the test command at {what} {why}")
            cases = {
                case.dotted or case.name: BaseCase(status_of(case), case.aliases)
                for case in parse_report(junit).cases
            }
    except UhError as exc:
        return BaseRun({}, False, f"the tests at {what} could not run: {exc.one_line()}")
    duration_ms = int((time.monotonic() - started) * 1000)
    write_json(
        path,
        {
            "version": CACHE_VERSION,
            "base_commit": base_commit,
            "command": command,
            "duration_ms": duration_ms,
            "cases": {
                name: {"status": c.status, "aliases": list(c.aliases)} for name, c in cases.items()
            },
        },
    )
    return BaseRun(cases, cached=False, duration_ms=duration_ms)


def regressions(
    base: Mapping[str, BaseCase], now: list[ReportedCase], retired: list[str]
) -> list[tuple[str, str]]:
    """(test id, how) for each test that passed at the base and does not pass now:
    ``missing`` (deleted or not collected), ``skipped``, ``xfailed``, ``failed``."""
    current = {case.dotted or case.name: case for case in now}
    found: list[tuple[str, str]] = []
    for name, was in sorted(base.items()):
        if was.status != "passed":
            continue
        probe = ReportedCase(name, "passed", name, was.aliases)
        if any(selects(selector, probe) for selector in retired):
            continue
        case = current.get(name)
        if case is None:
            found.append((name, "missing"))
        elif case.status != "passed":
            found.append((name, "failed" if case.status == "error" else status_of(case)))
    return found
