"""``required_test_modified`` compares tests as Python resolves them: the final binding of each
name (a def's AST, decorators included), enclosing classes and ``pytestmark``."""

from __future__ import annotations

import pytest

from tests.conftest import Repo, git
from uh_core.judge.testfuncs import bindings, changed, modified_tests

BASE = """\
import pytest


def _noop():
    pass


def test_add():
    assert 1 + 1 == 2


@pytest.mark.parametrize("a, b", [(1, 2), (2, 3)])
def test_mul(a, b):
    assert a * b == b * a


class TestCalc:
    def test_add(self):
        assert 1 + 1 == 2

    def test_sub(self):
        assert 2 - 1 == 1
"""
NAMES = ["test_add", "test_mul", "TestCalc.test_add", "TestCalc.test_sub"]


def changed_names(after: str) -> list[str]:
    before = bindings(BASE)
    assert before is not None
    now = bindings(after)
    return [name for name in NAMES if changed(name, before, now)]


def test_bindings_keep_the_final_binding_of_each_name() -> None:
    found = bindings(BASE + "test_mul = _noop\n")
    assert found is not None
    assert found["test_mul"] == "assign:Name(id='_noop', ctx=Load())"
    assert found["test_add"].startswith("def:FunctionDef(name='test_add'")
    assert found["TestCalc"].startswith("class:TestCalc")
    assert found["TestCalc.test_sub"].startswith("def:FunctionDef(name='test_sub'")
    assert found["pytest"] == "module:pytest"
    assert bindings("def broken(:\n") is None


# id → (the test file now, the names of NAMES reported as changed)
UNIT_CASES: dict[str, tuple[str, list[str]]] = {
    # the attack: the def's text stays byte-identical, the name is rebound
    "rebound-after-def": (BASE + "\n\ntest_mul = _noop\n", ["test_mul"]),
    "class-attr-rebound": (
        BASE + "\n\nTestCalc.test_add = lambda self: None\n",
        ["TestCalc.test_add"],
    ),
    "rebound-in-class-body": (BASE + "\n    test_add = None\n", ["TestCalc.test_add"]),
    "setattr": (BASE + "\n\nsetattr(TestCalc, 'test_sub', _noop)\n", ["TestCalc.test_sub"]),
    "globals-subscript": (BASE + "\n\nglobals()['test_add'] = _noop\n", ["test_add"]),
    # unresolved: every binding of that name is suspect
    "sys-modules": (
        BASE + "\n\nimport sys\nsys.modules[__name__].test_add = _noop\n",
        ["test_add", "TestCalc.test_add"],
    ),
    "inside-if": (BASE + "\n\nif True:\n    test_add = _noop\n", ["test_add"]),
    "except-as": (
        BASE + "\n\ntry:\n    pass\nexcept Exception as test_add:\n    pass\n",
        ["test_add"],
    ),
    "for-target": (BASE + "\n\nfor test_add in [_noop]:\n    pass\n", ["test_add"]),
    "walrus": (BASE + "\n\n(test_add := _noop)\n", ["test_add"]),
    "from-import": (BASE + "\n\nfrom helpers import test_add\n", ["test_add"]),
    "del": (BASE + "\n\ndel test_mul\n", ["test_mul"]),
    "global-in-function": (
        BASE + "\n\ndef _f():\n    global test_add\n    test_add = _noop\n\n\n_f()\n",
        ["test_add"],
    ),
    "class-alias": (
        BASE + "\n\nAlias = TestCalc\nAlias.test_sub = None\n",
        ["TestCalc.test_sub"],
    ),
    # decorators, parametrize cases, marks
    "skip-added": (
        BASE.replace("def test_add():", "@pytest.mark.skip\ndef test_add():"),
        ["test_add"],
    ),
    "xfail-added-in-class": (
        BASE.replace("    def test_sub", "    @pytest.mark.xfail\n    def test_sub"),
        ["TestCalc.test_sub"],
    ),
    "parametrize-case-removed": (BASE.replace(", (2, 3)]", "]"), ["test_mul"]),
    "class-skipped": (
        BASE.replace("class TestCalc:", "@pytest.mark.skip\nclass TestCalc:"),
        NAMES[2:],
    ),
    "module-pytestmark": (BASE + "\n\npytestmark = pytest.mark.skip\n", NAMES),
    "class-pytestmark": (BASE + "\n    pytestmark = pytest.mark.skip\n", NAMES[2:]),
    # the body
    "body-changed": (
        BASE.replace("assert 1 + 1 == 2\n\n\n", "assert True\n\n\n"),
        ["test_add"],
    ),
    "method-body-changed": (
        BASE.replace("        assert 2 - 1 == 1", "        pass"),
        ["TestCalc.test_sub"],
    ),
    # not modifications
    "formatting-and-comments": (
        BASE.replace("assert 1 + 1 == 2", "assert 1+1==2  # same").replace("\n\n\n", "\n\n"),
        [],
    ),
    "new-test": (BASE + "\n\ndef test_new():\n    assert _noop() is None\n", []),
    "unrelated-name": (BASE + "\n\ntest_helper_value = 3\n", []),
    "annotation-alone": (BASE + "\n\ntest_add: int\n", []),
    # gone, or unreadable
    "deleted": (BASE.replace("def test_add():\n    assert 1 + 1 == 2\n", ""), ["test_add"]),
    "unparseable": (BASE + "\ndef broken(:\n", NAMES),
}


@pytest.mark.parametrize(("after", "expected"), list(UNIT_CASES.values()), ids=list(UNIT_CASES))
def test_changed_as_python_resolves_it(after: str, expected: list[str]) -> None:
    assert changed_names(after) == expected


def test_only_the_final_binding_counts() -> None:
    # rebound and then redefined identically: Python ends where the base did
    restored = BASE + "\n\ntest_add = _noop\n\n\ndef test_add():\n    assert 1 + 1 == 2\n"
    assert changed_names(restored) == []
    # a class redefined drops the old members
    redefined = BASE + "\n\nclass TestCalc:\n    def test_add(self):\n        assert 1 + 1 == 2\n"
    assert changed_names(redefined) == ["TestCalc.test_sub"]


def commit_base(repo: Repo) -> str:
    repo.write("tests/test_calc.py", BASE)
    repo.commit("tests")
    return git(repo.root, "rev-parse", "HEAD").strip()


TOUCHED = ["tests/test_calc.py"]
SELECTORS = [
    "tests/test_calc.py::test_add",
    "tests/test_calc.py::test_mul[2-3]",
    "tests/test_calc.py::TestCalc::test_add",
]


def where(*names: str) -> list[tuple[str, str]]:
    found = [(s, s.split("[", 1)[0]) for s in SELECTORS]
    return [pair for pair in found if pair[1].split("::", 1)[1] in names]


REPO_CASES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "rebound-after-def": (BASE + "\n\ntest_mul = _noop\n", where("test_mul")),
    "class-attr-rebound": (
        BASE + "\n\nTestCalc.test_add = lambda self: None\n",
        where("TestCalc::test_add"),
    ),
    "rebound-in-class-body": (BASE + "\n    test_add = None\n", where("TestCalc::test_add")),
    "skip-added": (
        BASE.replace("def test_add():", "@pytest.mark.skip\ndef test_add():"),
        where("test_add"),
    ),
    "parametrize-case-removed": (BASE.replace(", (2, 3)]", "]"), where("test_mul")),
    "module-pytestmark": (
        BASE + "\n\npytestmark = pytest.mark.skip\n",
        where("test_add", "test_mul", "TestCalc::test_add"),
    ),
    "formatting-and-comments": (
        BASE.replace("== 2", "== 2  # fine").replace("\n\n\ndef", "\n\n\n\ndef"),
        [],
    ),
    "new-test": (BASE + "\n\ndef test_new():\n    assert True\n", []),
    "body-changed": (
        BASE.replace("assert 1 + 1 == 2\n\n\n", "assert True\n\n\n"),
        where("test_add"),
    ),
    "deleted": (BASE.replace("def test_add():\n    assert 1 + 1 == 2\n", ""), where("test_add")),
    "from-import-replaces-def": (
        BASE.replace("def test_add():\n    assert 1 + 1 == 2\n", "from helpers import test_add\n"),
        where("test_add"),
    ),
}


@pytest.mark.parametrize(("after", "expected"), list(REPO_CASES.values()), ids=list(REPO_CASES))
def test_modified_tests_in_a_worktree(
    repo: Repo, after: str, expected: list[tuple[str, str]]
) -> None:
    base = commit_base(repo)
    repo.write("tests/test_calc.py", after)
    assert modified_tests(repo.root, base, SELECTORS, TOUCHED) == expected


def test_other_selector_forms(repo: Repo) -> None:
    base = commit_base(repo)
    repo.write("tests/test_calc.py", BASE + "\n\ntest_mul = _noop\nTestCalc.test_add = None\n")
    selectors = ["test_mul", "tests.test_calc.TestCalc.test_add", "tests/test_calc.py"]
    assert modified_tests(repo.root, base, selectors, TOUCHED) == [
        ("test_mul", "tests/test_calc.py::test_mul"),
        ("tests.test_calc.TestCalc.test_add", "tests/test_calc.py::TestCalc::test_add"),
        ("tests/test_calc.py", "tests/test_calc.py::test_mul"),
        ("tests/test_calc.py", "tests/test_calc.py::TestCalc::test_add"),
    ]
    # untouched files are not read; a named class stands for its tests
    assert modified_tests(repo.root, base, SELECTORS, []) == []
    assert modified_tests(repo.root, base, ["tests/test_calc.py::TestCalc"], TOUCHED) == [
        ("tests/test_calc.py::TestCalc", "tests/test_calc.py::TestCalc::test_add"),
    ]


def test_a_new_test_file_and_a_deleted_one(repo: Repo) -> None:
    base = commit_base(repo)
    repo.write("tests/test_new.py", "def test_new():\n    pass\n")
    (repo.root / "tests/test_calc.py").unlink()
    touched = ["tests/test_new.py", *TOUCHED]
    selectors = ["tests/test_new.py::test_new", "tests/test_calc.py::TestCalc::test_sub"]
    assert modified_tests(repo.root, base, selectors, touched) == [
        ("tests/test_calc.py::TestCalc::test_sub", "tests/test_calc.py::TestCalc::test_sub")
    ]
