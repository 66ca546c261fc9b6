"""Test infrastructure is part of the judge: changes to conftest.py, pytest's settings,
sitecustomize and .pth files between the base commit and the judged tree are refused."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import GIT_ENV, Repo, git
from uh_core.diff.globs import compile_globs
from uh_core.errors import GitError
from uh_core.judge.judgefiles import (
    JUDGE_FILE_CODE,
    JudgeChange,
    allow_entry,
    judge_changes,
)

PYPROJECT = """\
[project]
name = "demo"
version = "0.1"
dependencies = ["requests"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""
SETUP_CFG = """\
[metadata]
name = demo

[tool:pytest]
testpaths = tests
"""
HOOK = """\
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    report.outcome = "passed"
    return report
"""


def base(repo: Repo, files: dict[str, str] | None = None) -> str:
    """Commit ``files`` on top of the fixture's commit: the base commit's id."""
    for rel, text in (files or {}).items():
        repo.write(rel, text)
    repo.commit("base")
    return git(repo.root, "rev-parse", "HEAD").strip()


def judged_tree(repo: Repo, base_commit: str) -> str:
    """The work tree as a tree object, built as the engine does: a temporary index."""
    env = {**os.environ, **GIT_ENV, "GIT_INDEX_FILE": str(repo.root.parent / "judge.index")}
    for args in (["read-tree", base_commit], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=repo.root, env=env, check=True, capture_output=True)
    done = subprocess.run(
        ["git", "write-tree"], cwd=repo.root, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def judge(repo: Repo, base_commit: str, allow: tuple[str, ...] = ()) -> list[JudgeChange]:
    return judge_changes(repo.root, base_commit, judged_tree(repo, base_commit), allow)


def pairs(changes: list[JudgeChange]) -> list[tuple[str, str]]:
    return [(change.path, change.how) for change in changes]


def test_nothing_changed(repo: Repo) -> None:
    commit = base(repo, {"tests/conftest.py": "", "pyproject.toml": PYPROJECT})
    assert judge(repo, commit) == []
    assert JUDGE_FILE_CODE == "agent_changed_the_judge"


def test_new_root_conftest_is_refused_and_named(repo: Repo) -> None:
    commit = base(repo)
    repo.write("conftest.py", HOOK)
    repo.write("src/app.py", "x = 1\n")  # an ordinary file is free
    changes = judge(repo, commit)
    assert pairs(changes) == [("conftest.py", "created")]
    assert changes[0].message() == (
        "conftest.py created: test infrastructure is part of the judge "
        "(permit it with judge_allow: [conftest.py])"
    )


def test_conftest_at_any_depth(repo: Repo) -> None:
    commit = base(repo)
    repo.write("pkg/sub/deep/conftest.py", HOOK)
    repo.write("tests/conftest_helpers.py", "")  # not a conftest
    assert pairs(judge(repo, commit)) == [("pkg/sub/deep/conftest.py", "created")]


def test_edited_and_deleted_conftest(repo: Repo) -> None:
    commit = base(repo, {"tests/conftest.py": "X = 1\n", "conftest.py": ""})
    repo.write("tests/conftest.py", HOOK)
    (repo.root / "conftest.py").unlink()
    assert pairs(judge(repo, commit)) == [
        ("conftest.py", "deleted"),
        ("tests/conftest.py", "modified"),
    ]


@pytest.mark.parametrize("allow", [("tests/conftest.py",), ("**/conftest.py",), ("tests/",)])
def test_allow_permits(repo: Repo, allow: tuple[str, ...]) -> None:
    commit = base(repo, {"tests/conftest.py": ""})
    repo.write("tests/conftest.py", "import pytest\n")
    assert judge(repo, commit, allow) == []
    if allow == ("tests/conftest.py",):
        repo.write("conftest.py", HOOK)  # the allow list names one file, not every conftest
        assert pairs(judge(repo, commit, allow)) == [("conftest.py", "created")]


def test_ini_files(repo: Repo) -> None:
    commit = base(repo, {"tox.ini": "[tox]\nenvlist = py311\n"})
    repo.write("pytest.ini", "[pytest]\naddopts = -p tests.plug\n")
    repo.write("tox.ini", "[tox]\nenvlist = py312\n")  # the whole file counts
    repo.write("sub/.pytest.ini", "[pytest]\n")
    assert pairs(judge(repo, commit)) == [
        ("pytest.ini", "created"),
        ("sub/.pytest.ini", "created"),
        ("tox.ini", "modified"),
    ]


def test_sitecustomize_and_pth(repo: Repo) -> None:
    commit = base(repo)
    repo.write("sitecustomize.py", "import os\n")
    repo.write("lib/usercustomize.py", "")
    repo.write("x.pth", "import tests.plug\n")
    assert pairs(judge(repo, commit)) == [
        ("lib/usercustomize.py", "created"),
        ("sitecustomize.py", "created"),
        ("x.pth", "created"),
    ]


def test_distribution_metadata_at_any_depth(repo: Repo) -> None:
    """A ``*.dist-info`` or ``*.egg-info`` folder on ``sys.path`` is a distribution whose
    ``pytest11`` entry point pytest loads as a plugin: created or changed, it is refused."""
    commit = base(repo, {"src/calc.egg-info/PKG-INFO": "Name: calc\n"})
    repo.write("extras-1.0.dist-info/entry_points.txt", "[pytest11]\nx = extras_plug\n")
    repo.write("extras-1.0.dist-info/METADATA", "Name: extras\n")
    repo.write("src/calc.egg-info/entry_points.txt", "[pytest11]\nx = plug\n")
    repo.write("docs/dist-info.md", "prose\n")  # not a metadata folder
    assert pairs(judge(repo, commit)) == [
        ("extras-1.0.dist-info/METADATA", "created"),
        ("extras-1.0.dist-info/entry_points.txt", "created"),
        ("src/calc.egg-info/entry_points.txt", "created"),
    ]


def test_files_the_commands_run_are_judged_whole(repo: Repo) -> None:
    commit = base(repo, {"checks/adds.sh": "test -f src/calc.py\n", "Makefile": "test:\n"})
    repo.write("checks/adds.sh", "exit 0\n")
    repo.write("Makefile", "test:\n\ttrue\n")
    repo.write("checks/other.sh", "exit 0\n")  # no command runs it
    named = frozenset({"checks/adds.sh", "Makefile", "run.py"})
    changes = judge_changes(repo.root, commit, judged_tree(repo, commit), (), named)
    assert pairs(changes) == [("Makefile", "modified"), ("checks/adds.sh", "modified")]
    repo.write("run.py", "print('ok')\n")  # a script a check runs, created by the agent
    changes = judge_changes(repo.root, commit, judged_tree(repo, commit), ("Makefile",), named)
    assert pairs(changes) == [("checks/adds.sh", "modified"), ("run.py", "created")]


def test_a_created_module_in_place_of_one_the_judge_imports(repo: Repo) -> None:
    commit = base(repo, {"src/json.py": "# the project's own, at the base\n"})
    repo.write("pluggy.py", "x = 1\n")
    repo.write("_pytest/__init__.py", "")
    repo.write("src/json.py", "# changed: the project's own module, free\n")
    repo.write("src/secrets.py", "x = 1\n")  # src is on the path only where a command says
    repo.write("calc_helpers.py", "")
    tree = judged_tree(repo, commit)
    changes = judge_changes(repo.root, commit, tree, roots=("",))
    assert pairs(changes) == [
        ("_pytest/__init__.py", "created, in place of the module '_pytest' the judge imports"),
        ("pluggy.py", "created, in place of the module 'pluggy' the judge imports"),
    ]
    assert "judge_allow: [pluggy.py]" in changes[1].message()
    changes = judge_changes(repo.root, commit, tree, roots=("", "src"))
    assert [c.path for c in changes] == ["_pytest/__init__.py", "pluggy.py", "src/secrets.py"]


def test_pyproject_dependency_only_is_free(repo: Repo) -> None:
    commit = base(repo, {"pyproject.toml": PYPROJECT})
    repo.write("pyproject.toml", PYPROJECT.replace('["requests"]', '["requests", "attrs"]'))
    assert judge(repo, commit) == []


def test_pyproject_addopts_is_refused(repo: Repo) -> None:
    plain = '[project]\nname = "demo"\n'
    commit = base(repo, {"pyproject.toml": plain})
    repo.write("pyproject.toml", plain + '\n[tool.pytest.ini_options]\naddopts = "-p tests.plug"\n')
    assert pairs(judge(repo, commit)) == [("pyproject.toml", "test-runner section added")]
    repo.write("pyproject.toml", PYPROJECT)
    commit = base(repo)
    repo.write("pyproject.toml", PYPROJECT + 'addopts = "-p tests.plug"\n')
    assert pairs(judge(repo, commit)) == [("pyproject.toml", "test-runner section changed")]
    (repo.root / "pyproject.toml").unlink()
    assert pairs(judge(repo, commit)) == [("pyproject.toml", "test-runner section removed")]


def test_pyproject_that_no_longer_parses(repo: Repo) -> None:
    commit = base(repo, {"pyproject.toml": PYPROJECT})
    repo.write("pyproject.toml", PYPROJECT + "[broken\n")
    changes = judge(repo, commit)
    assert pairs(changes) == [("pyproject.toml", "no longer parses")]
    message = changes[0].message()
    assert message.startswith("pyproject.toml no longer parses: the test runner's settings")
    # Already broken at the base: no settings on either side, nothing to refuse.
    commit = base(repo)
    repo.write("pyproject.toml", PYPROJECT + "[broken again\n")
    assert judge(repo, commit) == []


def test_setup_cfg_only_the_pytest_section(repo: Repo) -> None:
    commit = base(repo, {"setup.cfg": SETUP_CFG})
    repo.write("setup.cfg", SETUP_CFG.replace("name = demo", "name = demo2"))
    assert judge(repo, commit) == []
    repo.write("setup.cfg", SETUP_CFG + "addopts = -p tests.plug\n")
    assert pairs(judge(repo, commit)) == [("setup.cfg", "test-runner section changed")]
    repo.write("setup.cfg", "[metadata]\nname = demo\n")
    assert pairs(judge(repo, commit)) == [("setup.cfg", "test-runner section removed")]
    repo.write("setup.cfg", "addopts = -p tests.plug\n")  # no section header: does not parse
    assert pairs(judge(repo, commit)) == [("setup.cfg", "no longer parses")]


def test_setup_cfg_section_added(repo: Repo) -> None:
    commit = base(repo)
    repo.write("setup.cfg", "[metadata]\nname = demo\n")
    assert judge(repo, commit) == []
    repo.write("setup.cfg", "[tool:pytest]\naddopts = -p tests.plug\n")
    assert pairs(judge(repo, commit)) == [("setup.cfg", "test-runner section added")]


def test_pyproject_replaced_by_a_symlink_is_judged_whole(repo: Repo) -> None:
    commit = base(repo, {"pyproject.toml": PYPROJECT, "other.toml": PYPROJECT})
    (repo.root / "pyproject.toml").unlink()
    (repo.root / "pyproject.toml").symlink_to("other.toml")
    assert pairs(judge(repo, commit)) == [("pyproject.toml", "type changed")]


def test_committed_tree_and_bad_revision(repo: Repo) -> None:
    commit = base(repo)
    repo.write("conftest.py", HOOK)
    repo.commit("agent")
    changes = judge_changes(repo.root, commit, "HEAD^{tree}")
    assert pairs(changes) == [("conftest.py", "created")]
    with pytest.raises(GitError):
        judge_changes(repo.root, commit, "--output=/tmp/x")
    with pytest.raises(GitError):
        judge_changes(repo.root, commit, "0" * 39 + "1")


def test_allow_entry_quotes_what_needs_it() -> None:
    assert allow_entry("tests/conftest.py") == "tests/conftest.py"
    assert allow_entry("a b/conftest.py") == '"a b/conftest.py"'
    assert allow_entry("x[1]/conftest.py") == '"x\\\\[1\\\\]/conftest.py"'
    glob = "x\\[1\\]/conftest.py"  # the entry, once YAML has unquoted it
    assert compile_globs((glob,)).match("x[1]/conftest.py")
