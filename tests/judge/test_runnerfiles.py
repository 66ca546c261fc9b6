"""What a runner file the judge's commands name runs in turn (``uh_core.judge.runnerfiles``):
a Makefile's recipes, a script's lines, package.json's scripts, as the base commit has them."""

from __future__ import annotations

from uh_core.judge.runnerfiles import LIMIT, through

FILES = {
    "Makefile": "include ci/vars.mk\n\ncheck:\n\t@python3 tools/check.py --fast\n\t-sh ci/lint.sh\n",
    "ci/vars.mk": "X = 1\n",
    "ci/lint.sh": "#!/bin/sh\n# a comment: sh not/this.sh\nbash ci/helper.sh  # and a tail\n",
    "ci/helper.sh": "python3 tools/helper.py\n",
    "web/package.json": '{"scripts": {"test": "node test/run.js", "lint": "sh lint.sh"}}',
    "web/Makefile": "all:\n\tsh build.sh\n",
}


def read(path: str) -> str | None:
    return FILES.get(path)


def test_a_makefile_its_includes_and_the_scripts_they_run() -> None:
    assert through(frozenset({"Makefile"}), read) == {
        "Makefile",
        "ci/vars.mk",
        "tools/check.py",  # run by the recipe: the agent may not rewrite it to `pass`
        "ci/lint.sh",
        "ci/helper.sh",  # and what that script runs, in turn
        "tools/helper.py",
    }


def test_package_json_scripts_and_a_makefile_in_a_folder_run_there() -> None:
    assert through(frozenset({"web/package.json"}), read) == {
        "web/package.json",
        "web/test/run.js",
        "web/lint.sh",
    }
    assert through(frozenset({"web/Makefile"}), read) == {"web/Makefile", "web/build.sh"}


def test_files_absent_at_the_base_unreadable_or_not_runners_stop_there() -> None:
    assert through(frozenset({"tools/check.py", "gone.sh"}), read) == {"tools/check.py", "gone.sh"}
    broken = {"package.json": "{not json"}
    assert through(frozenset({"package.json"}), broken.get) == {"package.json"}


def test_it_is_bounded() -> None:
    chain = {f"s{n}.sh": f"sh s{n + 1}.sh\n" for n in range(500)}
    assert len(through(frozenset({"s0.sh"}), chain.get)) == LIMIT
