"""A room holds exactly the judged tree; the results stream and the report must agree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Repo, git
from uh_core.git import common_dir
from uh_core.isolation import bwrap_available, resolve_mode
from uh_core.judge.room import open_room
from uh_core.judge.stream import ResultStream, Session, disagreements, with_plugin_path
from uh_core.layout import Layout
from uh_core.proc import run_logged

OK, WHY = bwrap_available()
MODES = [
    pytest.param("bwrap", marks=pytest.mark.skipif(not OK, reason=f"no bubblewrap: {WHY}")),
    "none",
]


@pytest.mark.parametrize("mode", MODES)
def test_a_room_holds_the_judged_tree_and_nothing_else(repo: Repo, mode: str) -> None:
    repo.write(".gitignore", "__pycache__/\nsecret.txt\n")
    repo.write("calc.py", "def add(a, b):\n    return a - b\n")
    repo.commit("wrong add")
    tree = git(repo.root, "rev-parse", "HEAD^{tree}").strip()
    # what the agent left beside the commit: an ignored file and a bytecode cache of a
    # right add that would shadow the committed module if it were there
    repo.write("secret.txt", "planted")
    good = repo.root / "good.py"
    good.write_text("def add(a, b):\n    return a + b\n")
    cache = repo.root / "__pycache__"
    cache.mkdir()
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"import py_compile; py_compile.compile({str(good)!r}, cfile={str(cache / f'calc.cpython-{sys.version_info[0]}{sys.version_info[1]}.pyc')!r}, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
        ],
        check=True,
    )
    layout = Layout(repo.root)
    with open_room(layout, common_dir(repo.root), tree, resolve_mode(mode), label="t") as room:
        names = {p.name for p in room.checkout.iterdir()}
        assert "calc.py" in names and not {"secret.txt", "__pycache__", "good.py"} & names
        done = run_logged(
            f"{sys.executable} -c 'import calc; print(calc.add(2, 2))'", cwd=room.checkout,
            stdout_log=room.out / "o", stderr_log=room.out / "e", env=room.env,
            env_is_complete=True, launcher=room.launcher(),
        )  # fmt: skip
        assert done.stdout_snippet.strip() == "0"  # the committed code, not the planted cache
        assert "OPENAI_API_KEY" not in room.env and room.env["HOME"] != os.environ.get("HOME")
        scratch = room.scratch
    assert not scratch.exists()
    assert room.survivors == []


@pytest.mark.parametrize("mode", MODES)
def test_a_committed_bytecode_cache_is_not_what_runs(repo: Repo, mode: str) -> None:
    """An unchecked-hash ``.pyc`` of a right add, committed beside a wrong ``calc.py``: the
    room holds no ``__pycache__`` and the checks run the source (and write no bytecode)."""
    repo.write("calc.py", "def add(a, b):\n    return a - b\n")
    good = repo.root / "good.py"
    good.write_text("def add(a, b):\n    return a + b\n")
    tag = f"cpython-{sys.version_info[0]}{sys.version_info[1]}"
    cfile = repo.root / "__pycache__" / f"calc.{tag}.pyc"
    cfile.parent.mkdir()
    subprocess.run(
        [
            sys.executable, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], "
            "cfile=sys.argv[2], invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
            str(good), str(cfile),
        ],
        check=True,
    )  # fmt: skip
    good.unlink()
    repo.commit("wrong add, right cache")
    assert "__pycache__/calc" in git(repo.root, "ls-files")
    tree = git(repo.root, "rev-parse", "HEAD^{tree}").strip()
    layout = Layout(repo.root)
    with open_room(layout, common_dir(repo.root), tree, resolve_mode(mode), label="t") as room:
        assert not (room.checkout / "__pycache__").exists()
        done = run_logged(
            f"{sys.executable} -c 'import calc; print(calc.add(2, 2))'", cwd=room.checkout,
            stdout_log=room.out / "o", stderr_log=room.out / "e", env=room.env,
            env_is_complete=True, launcher=room.launcher(),
        )  # fmt: skip
        assert done.stdout_snippet.strip() == "0"  # the committed source
        assert not (room.checkout / "__pycache__").exists()  # and no bytecode written


def _session(outcomes: dict[str, str], status: int | None) -> Session:
    session = Session(status=status)
    for test_id, outcome in outcomes.items():
        session.record(test_id, "call", outcome)
    return session


def test_a_report_rewritten_after_the_tests_disagrees_with_the_stream() -> None:
    ran = [_session({"t::a": "failed", "t::b": "passed"}, 1)]
    forged = {"passed": 2, "failed": 0, "error": 0, "skipped": 0}
    found = disagreements(ran, forged, 0)
    assert any("JUnit report says 2 passed" in p for p in found)
    assert any("exit status 0" in p for p in found)
    honest = {"passed": 1, "failed": 1, "error": 0, "skipped": 0}
    assert disagreements(ran, honest, 1) == []
    assert disagreements([_session({"t::a": "passed"}, 0)], {"passed": 1}, 0) == []


def test_a_report_without_a_stream_is_forged_and_no_pytest_is_no_comparison() -> None:
    assert disagreements([], {"passed": 3}, 0)
    assert disagreements([], None, 0) == []
    assert "before the session finished" in disagreements([_session({}, None)], None, 1)[0]


def test_setup_errors_and_skips_are_counted_as_junit_does() -> None:
    session = Session(status=1)
    session.record("t::a", "setup", "failed")
    session.record("t::b", "setup", "skipped")
    session.record("t::c", "call", "passed")
    session.record("t::c", "teardown", "failed")
    assert session.counts() == {"passed": 0, "failed": 0, "error": 2, "skipped": 1}


def test_the_plugin_streams_each_test_as_pytest_reports_it(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        "import atexit, os\n"
        "def test_ok():\n    pass\n"
        "def test_bad():\n    assert False\n"
        "atexit.register(lambda: os._exit(0))\n"
    )
    stream = ResultStream(tmp_path / "stream.ndjson")
    env = stream.env({"PATH": os.environ["PATH"], "PYTHONPATH": ""})
    done = run_logged(
        with_plugin_path(f"PYTHONPATH=. {sys.executable} -m pytest -q -p no:cacheprovider"),
        cwd=tmp_path, stdout_log=tmp_path / "o", stderr_log=tmp_path / "e", env=env,
        env_is_complete=True, pass_fds=stream.pass_fds, on_start=stream.started, timeout=120,
    )  # fmt: skip
    [session] = stream.finish()
    assert done.exit_code == 0  # the exit handler forged the status
    assert session.counts()["failed"] == 1 and session.status == 1
    assert disagreements([session], None, done.exit_code)


def test_the_plugin_path_follows_a_command_that_sets_pythonpath() -> None:
    assert with_plugin_path("PYTHONPATH=src pytest").startswith("PYTHONPATH=src:")
    assert with_plugin_path("X_PYTHONPATH=1 pytest") == "X_PYTHONPATH=1 pytest"
