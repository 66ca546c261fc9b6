"""Both ways of starting a command give the child the same world (real processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from uh_core.errors import ProcError
from uh_core.proc import Prepared, full_env, run_prepared
from uh_core.proc import spawn as spawn_mod
from uh_core.proc.spawn import Spawned, spawn

WAYS = pytest.mark.parametrize("way", ["popen", "posix-spawn", "fork-exec"])


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work dir"
    folder.mkdir()
    return folder


def _start(
    way: str,
    argv: list[str],
    cwd: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    stdin_file: Path | None = None,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    """Run ``argv`` the given way; (exit code, stdout, stderr)."""
    if way == "fork-exec" and not spawn_mod._FORK_EXEC[0]:
        pytest.skip("_posixsubprocess.fork_exec is not used on this Python")
    if way == "posix-spawn":
        monkeypatch.setattr(spawn_mod, "_FORK_EXEC", [False])
    if way != "popen":
        monkeypatch.chdir(cwd)
    out = cwd.parent / "out.txt"
    err = cwd.parent / "err.txt"
    with open(out, "wb") as out_file, open(err, "wb") as err_file:
        child = spawn(
            argv,
            cwd=cwd,
            env=env if env is not None else full_env(None),
            stdin_file=stdin_file,
            stdout=out_file.fileno(),
            stderr=err_file.fileno(),
        )
    # posix_spawn takes a path; a bare name always goes through Popen's PATH search
    assert isinstance(child, Spawned) == (way != "popen" and os.sep in argv[0])
    code = child.wait(timeout=30)
    return code, out.read_text(), err.read_text()


@WAYS
def test_cwd_env_and_a_new_session(way: str, work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = (
        "import os; print(os.getcwd()); print(os.environ['UH_PROBE']); "
        "print(os.getsid(0) == os.getpid() == os.getpgid(0))"
    )
    code, out, _ = _start(
        way, [sys.executable, "-c", script], work, monkeypatch, env=full_env({"UH_PROBE": "x y"})
    )
    assert code == 0
    assert out.splitlines() == [str(work), "x y", "True"]


def _ignored_signals(text: str) -> int:
    line = next(line for line in text.splitlines() if line.startswith("SigIgn:"))
    return int(line.split()[1], 16)


@WAYS
def test_sigpipe_and_sigxfsz_are_back_at_their_defaults(
    way: str, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python ignores both; a check like ``yes | head -n1`` must still end by SIGPIPE."""
    code, out, _ = _start(way, ["/bin/cat", "/proc/self/status"], work, monkeypatch)
    assert code == 0
    ignored = _ignored_signals(out)
    for sig in (13, 25):  # SIGPIPE, SIGXFSZ
        assert not ignored & (1 << (sig - 1))
    code, out, err = _start(way, ["/bin/sh", "-c", "yes | head -n1"], work, monkeypatch)
    assert (code, out, err) == (0, "y\n", "")


@WAYS
def test_no_descriptor_leaks_into_the_child(
    way: str, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An inheritable descriptor (one we were started with, or an ``os.dup2``) stays ours."""
    read_end, write_end = os.pipe()
    leaked = os.dup2(write_end, 77)  # dup2 makes an inheritable copy
    try:
        assert os.get_inheritable(leaked)
        script = "import json, os; print(json.dumps([int(n) for n in os.listdir('/proc/self/fd')]))"
        code, out, _ = _start(way, [sys.executable, "-c", script], work, monkeypatch)
    finally:
        for fd in (read_end, write_end, leaked):
            os.close(fd)
    assert code == 0
    seen = json.loads(out)
    assert 77 not in seen and write_end not in seen and read_end not in seen
    assert {0, 1, 2} <= set(seen)


@WAYS
def test_stdin_is_the_given_file_or_empty(
    way: str, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = work.parent / "in.txt"
    given.write_text("fed in\n")
    assert _start(way, ["/bin/cat"], work, monkeypatch, stdin_file=given)[:2] == (0, "fed in\n")
    assert _start(way, ["/bin/cat"], work, monkeypatch)[:2] == (0, "")


@WAYS
def test_a_bare_name_is_found_on_the_path_of_the_given_env(
    way: str, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = work.parent / "bin" / "uh-probe-tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho found me\n")
    tool.chmod(0o755)
    env = full_env({"PATH": f"{tool.parent}:{os.environ['PATH']}"})
    assert _start(way, ["uh-probe-tool"], work, monkeypatch, env=env)[:2] == (0, "found me\n")


@WAYS
def test_path_search_skips_what_cannot_run_and_names_the_real_error(
    way: str, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As execvp does: a non-executable match earlier on PATH does not hide a good one
    later, and a name found only as a non-executable file is "Permission denied"."""
    early, late = work.parent / "early", work.parent / "late"
    for folder in (early, late):
        folder.mkdir()
    (early / "uh-probe").write_text("#!/bin/sh\necho early\n")  # not executable
    (late / "uh-probe").write_text("#!/bin/sh\necho late\n")
    (late / "uh-probe").chmod(0o755)
    (late / "uh-locked").write_text("#!/bin/sh\n")
    env = full_env({"PATH": f"{early}:{late}"})
    assert _start(way, ["uh-probe"], work, monkeypatch, env=env)[:2] == (0, "late\n")
    with pytest.raises(ProcError, match="Permission denied"):
        _start(way, ["uh-locked"], work, monkeypatch, env=env)


@WAYS
def test_stdin_that_is_a_folder_is_refused(
    way: str, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ProcError, match=r"cannot read .*: Is a directory"):
        _start(way, ["/bin/cat"], work, monkeypatch, stdin_file=work)


def test_a_descriptor_opened_after_preparing_does_not_leak(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prepared ahead (as verify does), started later: the descriptors to close are
    looked at when the command starts."""
    monkeypatch.chdir(work)
    script = "import json, os; print(json.dumps([int(n) for n in os.listdir('/proc/self/fd')]))"
    prepared = Prepared(
        [sys.executable, "-c", script],
        cwd=work,
        stdout_log=work.parent / "p.out",
        stderr_log=work.parent / "p.err",
        lazy_logs=True,
    )
    read_end, write_end = os.pipe()
    leaked = os.dup2(write_end, 91)
    try:
        result = run_prepared(prepared, timeout=30)
    finally:
        for fd in (read_end, write_end, leaked):
            os.close(fd)
    assert result.exit_code == 0
    assert 91 not in json.loads(result.stdout_snippet)


def test_an_exit_status_someone_else_took_is_an_error_not_a_pass(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    child = _spawned_quietly(["/bin/sh", "-c", "exit 3"], work, monkeypatch)
    os.waitpid(child.pid, 0)  # a stray reaper
    with pytest.raises(ProcError, match=r"exit status of process .* was lost"):
        child.wait()


@WAYS
def test_a_missing_program_or_stdin_is_a_proc_error(
    way: str, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ProcError, match="cannot start 'uh-no-such-program'"):
        _start(way, ["uh-no-such-program"], work, monkeypatch)
    with pytest.raises(ProcError, match=r"cannot start.*No such file"):
        _start(way, [str(work / "missing")], work, monkeypatch)
    locked = work / "locked.sh"
    locked.write_text("#!/bin/sh\n")  # not executable
    with pytest.raises(ProcError, match=r"cannot start.*Permission denied"):
        _start(way, [str(locked)], work, monkeypatch)
    with pytest.raises(ProcError, match="cannot read"):
        _start(way, ["/bin/cat"], work, monkeypatch, stdin_file=work / "absent.txt")


def test_posix_spawn_only_when_cwd_is_ours(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Elsewhere it would run in the wrong folder: Popen (which can chdir) takes over."""
    monkeypatch.chdir(work.parent)
    assert _start("popen", ["pwd"], work, monkeypatch)[1] == f"{work}\n"


def test_without_setsid_support_popen_takes_over_for_good(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def unsupported(*args: object, **kwargs: object) -> int:
        calls.append("posix_spawn")
        raise NotImplementedError("setsid")

    monkeypatch.setattr(spawn_mod.os, "posix_spawn", unsupported)
    monkeypatch.setattr(spawn_mod, "_SPAWN", [True])
    monkeypatch.setattr(spawn_mod, "_FORK_EXEC", [False])
    monkeypatch.chdir(work)
    out = work.parent / "o"
    with open(out, "wb") as handle:
        for _ in range(2):
            started = spawn(
                ["/bin/pwd"],
                cwd=work,
                env=full_env(None),
                stdin_file=None,
                stdout=handle.fileno(),
                stderr=handle.fileno(),
            )
            assert isinstance(started, subprocess.Popen)
            started.wait()
    assert calls == ["posix_spawn"]  # tried once, then never again
    assert out.read_text() == f"{work}\n{work}\n"


def test_fork_exec_that_takes_other_arguments_gives_way_to_posix_spawn_for_good(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Python whose ``fork_exec`` takes other arguments: ``os.posix_spawn`` from then on."""
    calls: list[str] = []

    class Changed:
        @staticmethod
        def fork_exec(*args: object) -> int:
            calls.append("fork_exec")
            raise TypeError(f"fork_exec() takes 24 arguments ({len(args)} given)")

    monkeypatch.setattr(spawn_mod, "_posixsubprocess", Changed)
    monkeypatch.setattr(spawn_mod, "_FORK_EXEC", [True])
    # as when SIGINT is not ignored: a suite run as a background job would take Popen instead
    monkeypatch.setattr(spawn_mod, "job_signals_preexec", lambda: None)
    monkeypatch.chdir(work)
    for _ in range(2):
        child = spawn(
            ["/bin/sh", "-c", "exit 4"],
            cwd=work,
            env=full_env(None),
            stdin_file=None,
            stdout=_devnull(),
            stderr=_devnull(),
        )
        assert isinstance(child, Spawned) and child.wait(timeout=30) == 4
    assert calls == ["fork_exec"]  # tried once, then never again


def test_fork_exec_is_not_used_while_sigint_is_ignored(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Putting SIGINT back in the child needs a step fork_exec cannot take without Python
    code in the child: posix_spawn (which has it) starts the command instead."""
    if not spawn_mod._FORK_EXEC[0]:
        pytest.skip("_posixsubprocess.fork_exec is not used on this Python")
    calls: list[str] = []
    real = spawn_mod._posix_spawn

    def counted(*args: object, **kwargs: object) -> Spawned:
        calls.append("posix_spawn")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(spawn_mod, "_posix_spawn", counted)
    monkeypatch.setattr(spawn_mod, "_getsignal", lambda signum: signal.SIG_IGN)
    code, _, _ = _start("fork-exec", ["/bin/sh", "-c", "exit 0"], work, monkeypatch)
    assert code == 0 and calls == ["posix_spawn"]


def test_an_environment_alike_reuses_its_encoding_and_a_changed_one_does_not(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for value in ("one", "one", "two"):
        env = full_env({"UH_PROBE": value})
        code, out, _ = _start(
            "fork-exec", ["/bin/sh", "-c", "echo $UH_PROBE"], work, monkeypatch, env=env
        )
        assert (code, out) == (0, f"{value}\n")
    env = full_env({"UH_PROBE": "x"})
    env.pop("UH_PROBE")
    env["UH=BAD"] = "y"
    with pytest.raises(ValueError, match="illegal environment variable name"):
        spawn_mod._env_block(env)


def test_spawned_wait_times_out_and_poll_reaps(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    child = _spawned_quietly(["/bin/sleep", "5"], work, monkeypatch)
    assert child.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        child.wait(timeout=0.05)
    os.kill(child.pid, 15)
    assert child.wait(timeout=5) == -15
    assert child.poll() == -15


def _spawned_quietly(argv: list[str], work: Path, monkeypatch: pytest.MonkeyPatch) -> Spawned:
    """``argv`` started by posix_spawn from ``work``, its output thrown away."""
    monkeypatch.chdir(work)
    child = spawn(
        argv,
        cwd=work,
        env=full_env(None),
        stdin_file=None,
        stdout=_devnull(),
        stderr=_devnull(),
    )
    assert isinstance(child, Spawned)
    return child


_NULLS: list[int] = []


def _devnull() -> int:
    fd = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    _NULLS.append(fd)
    return fd


@pytest.fixture(autouse=True)
def _close_nulls() -> Iterator[None]:
    yield
    while _NULLS:
        os.close(_NULLS.pop())
