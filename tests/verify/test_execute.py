"""CheckRunner: one command at a time, the next prepared while one runs (real processes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import fds
from uh_core.proc import full_env
from uh_core.verify.execute import CheckRunner, Job


@pytest.fixture(params=["popen", "posix-spawn"])
def work(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if request.param == "posix-spawn":
        monkeypatch.chdir(tmp_path)
    return tmp_path


def _runner(work: Path, repeat: int = 1) -> CheckRunner:
    return CheckRunner(
        cwd=work,
        log_dir=work / "run",
        env=full_env(None),
        repeat=repeat,
        grace=0.5,
        rel=lambda path: str(path.relative_to(work)),
    )


def test_commands_run_one_after_another_never_together(work: Path) -> None:
    """The next command is only prepared (pipes, logs cleared) while one runs: the second
    sees everything the first did, and the first never sees the second's mark."""
    first = Job("sleep 0.2; test ! -e second && touch first", "first", 10)
    second = Job("test -e first && touch second", "second", 10)
    with _runner(work) as runner:
        assert runner.run(first, then=second).status == "passed"
        assert runner.run(second).status == "passed"


def test_repeats_and_logs_under_each_run(work: Path) -> None:
    seen: list[str] = []
    job = Job(
        'echo "run $UH_REPEAT_INDEX"; test "$UH_REPEAT_INDEX" != 2',
        "ac-x",
        10,
        on_start=lambda: seen.append("started"),
    )
    after = Job("echo after >&2", "ac-y", 10)
    with _runner(work, repeat=3) as runner:
        evidence = runner.run(job, then=after)
        later = runner.run(after)
    assert seen == ["started"]  # once, for the first run
    assert evidence.runs == ["passed", "failed", "passed"]
    assert (evidence.status, evidence.flaky) == ("unobserved", True)
    assert evidence.stdout_log == "run/ac-x.2.stdout.log"  # the failing run's evidence
    for n in (1, 2, 3):
        assert (work / f"run/ac-x.{n}.stdout.log").read_text() == f"run {n}\n"
    assert later.runs == ["passed"] * 3
    assert later.stderr_log == "run/ac-y.3.stderr.log" and later.stdout_log is None  # the last
    assert not list((work / "run").glob("ac-y.*.stdout.log"))


def test_a_prepared_job_that_never_comes_leaves_nothing_open(work: Path) -> None:
    before = fds.snapshot()
    with _runner(work) as runner:
        runner.run(Job("true", "a", 10), then=Job("true", "never", 10))
        assert fds.left_open(before, settle_s=0)  # the next one's pipes are ready
        other = runner.run(Job("echo other", "b", 10))  # not what was prepared
        assert other.status == "passed" and other.stdout_snippet == "other\n"
        runner.run(Job("true", "c", 10), then=Job("true", "never-again", 10))
    assert fds.left_open(before, kinds=(*fds.OURS, str(work))) == {}
    assert not list((work / "run").glob("never*"))


def test_an_older_log_of_the_next_job_does_not_pass_for_its_own(work: Path) -> None:
    stale = work / "run" / "b.stdout.log"
    stale.parent.mkdir(parents=True)
    stale.write_text("from an older run\n")
    with _runner(work) as runner:
        runner.run(Job("true", "a", 10), then=Job("true", "b", 10))
        evidence = runner.run(Job("true", "b", 10))
    assert evidence.stdout_log is None and not stale.exists()


def test_a_failing_on_start_stops_the_command_and_closes_everything(work: Path) -> None:
    before = fds.snapshot()

    def boom() -> None:
        raise RuntimeError("event log is gone")

    with _runner(work) as runner, pytest.raises(RuntimeError, match="event log is gone"):
        runner.run(Job("sleep 30", "a", 60, on_start=boom), then=Job("true", "b", 10))
    assert fds.left_open(before, kinds=(*fds.OURS, str(work))) == {}


def test_a_job_alike_is_not_the_job_that_was_prepared(work: Path) -> None:
    """Prepared for one job, asked for another with the same stem: its own command runs."""
    with _runner(work) as runner:
        runner.run(Job("true", "a", 10), then=Job("echo prepared", "b", 10))
        evidence = runner.run(Job("echo actual", "b", 10))
    assert evidence.stdout_snippet == "actual\n"


def test_a_name_used_twice_in_a_new_folder_keeps_only_the_latest_log(work: Path) -> None:
    """In a folder the run makes, a first use of a name looks for no older log; a second
    use of the same name still removes the first one's."""
    with _runner(work) as runner:
        assert runner.run(Job("echo first", "a", 10)).stdout_log == "run/a.stdout.log"
        evidence = runner.run(Job("true", "a", 10))
    assert evidence.stdout_log is None and not (work / "run" / "a.stdout.log").exists()
