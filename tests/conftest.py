"""Shared fixtures: real git repositories in temporary folders and a real ``uh-core``."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import warm as _warm  # noqa: F401  (now: its START_ENV is the session's, tests/warm.py)

MAIN = str(Path(__file__).resolve().parents[1] / "uh_core" / "__main__.py")
COMPAT = Path(__file__).resolve().parents[2] / "shared" / "compat" / "uh"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "uh tests",
    "GIT_AUTHOR_EMAIL": "tests@uh.invalid",
    "GIT_COMMITTER_NAME": "uh tests",
    "GIT_COMMITTER_EMAIL": "tests@uh.invalid",
}


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject's addopts): two workers per core. Most of a test's time is
    spent waiting on the real processes it starts (git, ``uh-core``, checks, a Textual
    pilot's pauses), so one worker per core leaves the cores idle about a third of the time.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` or ``-n N`` still choose."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(2, 2 * (cores or 1))


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests measured slow (``tests/slow.txt``, tests/tiers.py) carry the ``slow`` marker:
    ``-m "not slow"`` is the quick tier."""
    from tests.tiers import slow_ids

    slow = slow_ids()
    for item in items:
        if item.nodeid in slow:
            item.add_marker(pytest.mark.slow)
        COLLECTED[item.nodeid] = item.get_closest_marker("slow") is not None


COLLECTED: dict[str, bool] = {}  # every test collected (before -m deselects): marked slow?


_TIMES: dict[str, float] = {}
_MARKED: set[str] = set()


SHARED_SETUP = "shared_setup_s"  # a user property: see shared_setup


def shared_setup(request: pytest.FixtureRequest, seconds: float) -> None:
    """``seconds`` of this test's setup went into something its whole worker shares (a
    template made on first use): not the test's own time, which the quick tier's warning
    below judges. The property travels with the test's reports, under xdist too."""
    if seconds >= 0.05:
        request.node.user_properties.append((SHARED_SETUP, seconds))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each test's setup + call + teardown (on the controller too, under xdist), less any
    shared setup it happened to be first to need."""
    shared = 0.0
    if report.when == "setup":
        shared = sum(float(v) for k, v in report.user_properties if k == SHARED_SETUP)
    _TIMES[report.nodeid] = _TIMES.get(report.nodeid, 0.0) + report.duration - shared
    if "slow" in report.keywords:
        _MARKED.add(report.nodeid)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Unmarked tests over ``WARN_S``: named, with how to measure again (never a failure: a
    loaded machine makes anything slow; tests/test_tiers.py checks the measured list)."""
    from tests.tiers import WARN_S

    over = sorted(
        ((t, n) for n, t in _TIMES.items() if t >= WARN_S and n not in _MARKED), reverse=True
    )
    if over:
        terminalreporter.section("tests over the quick tier's limit, not marked slow")
        for seconds, nodeid in over[:20]:
            terminalreporter.write_line(f"{seconds:6.2f} s  {nodeid}")
        terminalreporter.write_line(
            f"{len(over)} test(s) took {WARN_S:g} s or more unmarked: on a quiet machine, "
            "python3 tests/measure_slow.py (docs/testing.md)"
        )


def pytest_sessionstart(session: pytest.Session) -> None:
    """The suite's bytecode, written once before any test starts (tests/bytecode.py), and
    older runs' temporary folders removed while the tests run (tests/tmpsweep.py)."""
    if hasattr(session.config, "workerinput"):
        return  # xdist: the controller did both
    from tests.bytecode import compile_suite
    from tests.tmpsweep import sweep

    sweep(session.config)
    compile_suite(session.config)


def interruptible() -> None:
    """``preexec_fn`` for a child a test interrupts with SIGINT or SIGHUP: a suite started as
    a background job inherits SIGINT ignored (Python then installs no Ctrl-C handler), and
    one started under ``nohup`` SIGHUP ignored (which ``uh-core`` keeps, as it must); the
    child gets the dispositions an interactive user's process has."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def git(root: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str


@dataclass
class Repo:
    root: Path

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def mission(self, mission_id: str, text: str) -> Path:
        return self.write(f".harness/missions/{mission_id}/mission.yaml", text)

    def commit(self, message: str = "commit") -> None:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message, "--allow-empty")

    def uh(self, *args: str, timeout: float = 120) -> CliResult:
        """Run the real ``uh-core`` in a subprocess against this repo (``--root`` added)."""
        return self.uh_raw(*args, "--root", str(self.root), timeout=timeout)

    def start(self, *args: str, **popen: Any) -> subprocess.Popen[str]:
        """Start the real ``uh-core`` against this repo (``--root`` added) and do not wait:
        text mode, stdout piped unless ``popen`` says otherwise."""
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("preexec_fn", interruptible)
        return subprocess.Popen(
            [sys.executable, "-m", "uh_core", *args, "--root", str(self.root)],
            text=True,
            **popen,
        )

    def uh_raw(self, *args: str, timeout: float = 120) -> CliResult:
        """Run the real ``uh-core`` in a subprocess from this repo, arguments as given: a
        process forked by this test process's warm server (tests/warm.py), or a cold
        ``python -m uh_core`` with ``UH_TEST_COLD=1``."""
        from tests import warm

        server = warm.warm()
        if server is not None:
            done = server.run([MAIN, *args], self.root, timeout)
            return CliResult(done.returncode, done.stdout, done.stderr)
        proc = subprocess.run(
            [sys.executable, "-m", "uh_core", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
        return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(autouse=True)
def _state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's sandboxes in a folder of its own (``UH_STATE_DIR``), never in ~/.local."""
    state = tmp_path_factory.mktemp("uh-state")
    monkeypatch.setenv("UH_STATE_DIR", str(state))
    return state


@pytest.fixture(scope="session")
def repo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``repo`` fixture's repository, made once per worker. Each test works on a copy:
    the same commits, so what uh caches by commit (the base commit's test results) made
    for one copy is valid for every other (``tests/harness/conftest.py`` shares it)."""
    root = tmp_path_factory.mktemp("repo-template") / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# test repo\n", encoding="utf-8")
    from uh_core.init import init_project
    from uh_core.layout import Layout

    init_project(Layout(root))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def copy_repo(template: Path, root: Path) -> Repo:
    """A copy of a template repository at ``root``, its index refreshed: the copies' files
    have new inodes and change times, which git would otherwise read as changes."""
    shutil.copytree(template, root, symlinks=True)
    git(root, "update-index", "-q", "--refresh")
    return Repo(root)


@pytest.fixture
def repo(repo_template: Path, tmp_path: Path) -> Repo:
    """A git repository with one commit and an initialised ``.harness/``."""
    return copy_repo(repo_template, tmp_path / "repo")


@pytest.fixture
def compat() -> Path:
    if not COMPAT.is_dir():
        pytest.skip(f"compat inputs not found at {COMPAT}")
    return COMPAT


@pytest.fixture
def frozen_time(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    def freeze(value: str = "2026-11-29T12:00:00.000Z") -> None:
        monkeypatch.setenv("UH_FROZEN_TIME", value)

    return freeze


def pytest_unconfigure(config: pytest.Config) -> None:
    """Stop this test process's warm ``uh-core`` server (tests/warm.py), if it started one."""
    from tests import warm

    warm.close()
