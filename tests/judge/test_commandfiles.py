"""The files a judge command runs, and the modules its Python imports from the judged tree:
each is a judge file (``uh_core.judge.commandfiles``)."""

from __future__ import annotations

import pytest

from uh_core.judge.commandfiles import command_files, module_files
from uh_core.judge.shadowing import import_roots, shadowed

PYTEST_MAIN = {"pytest.py", "pytest/__init__.py", "pytest/__main__.py"}


@pytest.mark.parametrize(
    ("command", "files"),
    [
        (". ./test-env.sh && python -m pytest -q", {"test-env.sh", *PYTEST_MAIN}),
        ("source ci/env && bash ci/test; pytest tests/test_x.py", {"ci/env", "ci/test"}),
        ("python -m pytest tests/ -p no:cacheprovider", PYTEST_MAIN),  # tests are the agent's
        ("sh checks/adds.sh", {"checks/adds.sh"}),
        ("sh < checks/adds", {"checks/adds"}),  # a script on stdin
        # the second attack review's forms, each a green before it was read
        ("bash -o pipefail checks/adds", {"checks/adds"}),
        ("sh -- checks/adds", {"checks/adds"}),
        ("timeout -s KILL 60 python3 tools/check.py", {"tools/check.py"}),
        ("nice -n 5 python3 tools/check.py", {"tools/check.py"}),
        ('sh "$UH_ROOT/checks/adds.sh"', {"checks/adds.sh"}),
        ('python3 "${UH_ROOT}/tools/check.py"', {"tools/check.py"}),
        ('cd "$UH_ROOT" && ./checks/adds', {"checks/adds"}),
        ("env -S 'sh checks/x'", {"checks/x"}),
        ("cat checks/x | sh", {"checks/x"}),  # the script a shell reads from the pipe
        ("echo hi | sh", set()),
        ("make -fci.mk check", {"ci.mk"}),
        ("make -Cci test", {"ci/Makefile", "ci/makefile", "ci/GNUmakefile"}),
        ("awk -f checks/x.awk out.txt", {"checks/x.awk"}),
        ("python3 - 0< tools/check.py > out.txt 2>&1", {"tools/check.py"}),
        ("cat <<EOF\nx\nEOF", set()),  # a heredoc's delimiter is no file
        ("timeout 60 ./scripts/test --fast", {"scripts/test"}),
        ("env A=1 python3 -W ignore tools/check.py arg 2>/dev/null", {"tools/check.py"}),
        ("PYTHONPATH=src python3 -c 'import calc'", set()),
        ("node run.js && ruby t.rb", {"run.js", "t.rb"}),
        ("bash -ec 'sh x/y.sh && make'", {"x/y.sh", "Makefile", "makefile", "GNUmakefile"}),
        ("make test", {"Makefile", "makefile", "GNUmakefile"}),
        ("make -f ci.mk check", {"ci.mk"}),
        ("make -C ci test", {"ci/Makefile", "ci/makefile", "ci/GNUmakefile"}),
        ("cd sub && make", {"sub/Makefile", "sub/makefile", "sub/GNUmakefile"}),
        ("npm test", {"package.json"}),
        ("uv run python tools/t.py", {"tools/t.py"}),
        (
            "python3 -m unittest discover -s tests -q",
            {f"unittest{x}" for x in (".py", "/__init__.py", "/__main__.py")},
        ),
        ("/usr/bin/true && ../outside.sh && $HOME/x.sh", set()),  # not in the repository
        ('test "$(grep -c def src/core.py)" -le 3', set()),
        ("", set()),
    ],
)
def test_command_files(command: str, files: set[str]) -> None:
    assert command_files(command) == files


def test_no_command_runs_nothing() -> None:
    assert command_files(None) == frozenset()


def test_module_files_of_a_dotted_module() -> None:
    assert module_files("tools.check") == (
        "tools.py",
        "tools/__init__.py",
        "tools/check.py",
        "tools/check/__main__.py",
    )
    assert module_files("not a module") == ()


def test_import_roots_are_the_root_and_pythonpath_entries() -> None:
    commands = ["PYTHONPATH=src:lib python3 -c 'import calc'", "PYTHONPATH=/abs:./src x", None]
    assert import_roots(commands) == ("", "src", "lib")


@pytest.mark.parametrize(
    ("path", "roots", "module"),
    [
        ("pluggy.py", ("",), "pluggy"),
        ("_pytest/__init__.py", ("",), "_pytest"),
        ("json.py", ("",), "json"),
        ("pytest.cpython-311-x86_64-linux-gnu.so", ("",), "pytest"),
        ("unittest.pyc", ("",), "unittest"),
        ("src/json.py", ("", "src"), "json"),
        ("src/json.py", ("",), None),  # src is not on the path
        ("tests/json.py", ("",), None),
        ("calc.py", ("",), None),  # the project's own name
        ("json/helpers.py", ("",), None),  # not the package itself
        ("README.json", ("",), None),
    ],
)
def test_shadowed(path: str, roots: tuple[str, ...], module: str | None) -> None:
    assert shadowed(path, roots) == module


def test_files_the_mission_says_are_the_work_are_not_the_judge() -> None:
    """A check that runs the product (``node src/cli.js``, an expected ``bin/tool``) tests the
    agent's work: only the checker scripts beside it are judge files."""
    from uh_core.judge.commandfiles import judge_commands, judge_named
    from uh_core.models.mission import Mission

    mission = Mission.model_validate(
        {
            "id": "m",
            "acceptance_criteria": [
                {"id": "cli", "check_command": "node src/cli.js --help && sh checks/x.sh"},
                {"id": "tool", "check_command": "./bin/tool --version"},
            ],
            "expected_outputs": {"files": ["bin/tool"]},
            "tdd": {"source_paths": ["src/**"]},
        }
    )
    commands = judge_commands(mission, "make test")
    assert judge_named(mission, commands) == {"checks/x.sh", *RUNNER_MAKEFILES}
    bare = Mission.model_validate({"id": "m", "acceptance_criteria": mission.acceptance_criteria})
    assert "src/cli.js" in judge_named(bare, commands)  # unsaid: judged, judge_allow permits


RUNNER_MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
