"""The warm ``uh-core`` (tests/warm.py) answers as a cold ``python -m uh_core`` does: the same
exit status, output, working directory and environment, each command a process of its own."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests import warm
from tests.conftest import MAIN, Repo


def cold(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uh_core", *args],
        cwd=root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        ("verfy",),  # a usage error: exit 2, did-you-mean on stderr
        ("mission", "list"),
        ("status", "--json"),
        ("mission", "show", "nope"),  # bad input: its exit code and one clear line
    ],
)
def test_a_warm_command_answers_as_a_cold_one(repo: Repo, args: tuple[str, ...]) -> None:
    server = warm.warm()
    assert server is not None
    hot = server.run([MAIN, *args], repo.root, timeout=60)
    want = cold(repo.root, *args)
    assert (hot.returncode, hot.stdout, hot.stderr) == (want.returncode, want.stdout, want.stderr)


def test_each_command_has_the_callers_env_at_the_call(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment is the caller's at the call (a test's monkeypatch included): nothing
    of the server's start or of an earlier command is kept."""
    server = warm.warm()
    assert server is not None
    made = server.run(
        [MAIN, "mission", "new", "m", "--title", "M", "--criterion", "ok::true"],
        repo.root,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    record = repo.root / ".harness" / "missions" / "m" / "verification.yaml"
    for frozen in ("2030-01-02T03:04:05.000Z", "2031-05-06T07:08:09.000Z"):
        monkeypatch.setenv("UH_FROZEN_TIME", frozen)
        done = server.run([MAIN, "verify", "m", "--root", str(repo.root)], repo.root, timeout=60)
        assert done.returncode == 0, done.stderr
        assert frozen[:19] in record.read_text(encoding="utf-8")


def test_commands_run_side_by_side_and_a_timeout_kills_only_its_own(repo: Repo) -> None:
    server = warm.warm()
    assert server is not None
    results: list[int] = []

    def one() -> None:
        results.append(server.run([MAIN, "mission", "list"], repo.root, timeout=60).returncode)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [0, 0, 0, 0]

    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        # ``tail --follow`` never ends by itself
        server.run([MAIN, "tail", "--follow", "--root", str(repo.root)], repo.root, timeout=1.0)
    assert time.monotonic() - started < 10
    assert server.run([MAIN, "--version"], repo.root, timeout=60).returncode == 0


def test_cold_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UH_TEST_COLD", "1")
    assert warm.warm() is None
