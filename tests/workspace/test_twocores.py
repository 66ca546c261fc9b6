"""uh_core/workspace/twocores.py: two processes take keys from one queue, each key once; an
interrupted reader leaves no helper behind; a failed or killed helper only means work not
done, never a reader that waits."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from uh_core.workspace import twocores

KEYS = [f"k{i:03d}" for i in range(200)]
pytestmark = pytest.mark.skipif(not twocores.can_fork(), reason="needs fork and two cores")


class Recorder:
    """A helper that writes each key it derives (and its pid) to a file of its own."""

    def __init__(self, out: Path, first_s: float = 0.0, fail: bool = False) -> None:
        self.out, self.first_s, self.fail = out, first_s, fail

    def first(self) -> None:
        (self.out.with_suffix(".pid")).write_text(str(os.getpid()))
        if self.fail:
            raise RuntimeError("the helper fails")
        time.sleep(self.first_s)

    def derive(self, key: str) -> None:
        time.sleep(0.001)
        with self.out.open("a") as f:
            f.write(key + "\n")

    def close(self) -> None:
        with self.out.open("a") as f:
            f.write("closed\n")


def _until(check: Callable[[], bool], within: float = 60.0) -> None:
    """Wait for the helper to get somewhere (a loaded machine may run it late): on the
    event, never on a fixed sleep."""
    deadline = time.monotonic() + within
    while not check():
        assert time.monotonic() < deadline, "the helper never got there"
        time.sleep(0.005)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _pid(out: Path) -> int:
    pidfile = out.with_suffix(".pid")
    _until(lambda: pidfile.exists() and pidfile.read_text() != "")
    return int(pidfile.read_text())


def _pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _share(helper: Recorder, wait: Callable[[], bool] | None = None) -> tuple[list[str], list[str]]:
    """``share`` over ``KEYS`` with ``helper``: (what it returned, what the reader derived).
    ``wait``: what the reader waits for before it derives its first key."""
    ours: list[str] = []

    def derive(key: str) -> None:
        if wait is not None and not ours:
            _until(wait)
        time.sleep(0.001)
        ours.append(key)

    return twocores.share(KEYS, derive, lambda: helper, min_keys=0), ours


def test_every_key_is_derived_once_by_one_of_the_two(tmp_path: Path) -> None:
    out = tmp_path / "helper.txt"
    done, ours = _share(Recorder(out), wait=lambda: len(_lines(out)) >= 1)
    helper = out.read_text().splitlines()
    assert helper[-1] == "closed"  # it ended before share returned, its work stored
    theirs = helper[:-1]
    assert done == ours and ours and theirs
    assert sorted(ours + theirs) == KEYS  # each key once, none lost
    assert _pid_gone(_pid(out))  # and reaped


def test_an_interrupted_reader_ends_its_helper(tmp_path: Path) -> None:
    out = tmp_path / "helper.txt"

    def derive(key: str) -> None:
        if key == "k005":
            _pid(out)  # the helper is in its first(): interrupted while it works
            raise KeyboardInterrupt
        time.sleep(0.01)

    with pytest.raises(KeyboardInterrupt):
        twocores.share(KEYS, derive, lambda: Recorder(out, first_s=60), min_keys=0)
    assert _pid_gone(_pid(out))  # killed and reaped at once, not left to sleep out its minute
    assert not out.exists()  # it derived nothing


def test_a_helper_that_fails_leaves_every_key_to_the_reader(tmp_path: Path) -> None:
    out = tmp_path / "helper.txt"
    done, ours = _share(Recorder(out, fail=True))
    assert done == ours == KEYS
    assert not out.exists()


class Dies(Recorder):
    """A helper killed (SIGKILL: nothing of it runs after) on its third key."""

    def derive(self, key: str) -> None:
        super().derive(key)
        if len(self.out.read_text().splitlines()) == 3:
            os.kill(os.getpid(), signal.SIGKILL)


def test_a_helper_killed_midway_blocks_nothing(tmp_path: Path) -> None:
    """No lock a dead helper could hold: the reader goes on taking keys to the end."""
    out = tmp_path / "helper.txt"
    done, ours = _share(Dies(out), wait=lambda: len(_lines(out)) >= 3)
    theirs = out.read_text().splitlines()
    assert len(theirs) == 3 and "closed" not in theirs
    assert done == ours and not set(ours) & set(theirs)
    assert len(ours) + len(theirs) == len(KEYS)  # the killed one died after deriving its third
    assert _pid_gone(_pid(out))


def test_a_few_keys_are_not_worth_a_process(tmp_path: Path) -> None:
    out = tmp_path / "helper.txt"
    calls: list[str] = []
    assert twocores.share(KEYS[:3], calls.append, lambda: Recorder(out)) == []
    assert calls == [] and not out.with_suffix(".pid").exists()  # nothing forked or done
