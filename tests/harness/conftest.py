"""A tiny Python project in a real git repository, scripted agents, and the checks every
harness test shares (above all: the main checkout is never modified)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests import warm
from tests.conftest import CliResult, Repo, copy_repo, git, shared_setup
from uh_core.layout import Layout

PY = sys.executable
# Plugins of this environment take seconds to load; the tiny project needs none of them.
TEST_CMD = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {PY} -m pytest -q -p no:cacheprovider"
GOOD = "def add(a, b):\n    return a + b\n"
BAD = "def add(a, b):\n    return a - b\n"
TESTS = """\
from src.calc import add


def test_add():
    assert add(2, 3) == 5


def test_truth():
    assert True
"""
MISSION = f"""\
id: calc
title: Implement add
objective: add(a, b) returns the sum of a and b.
status: pending  # the harness sets done on its branch
constraints:
  - keep it small
acceptance_criteria:
  - id: adds
    description: add(2, 3) is 5
    check_command: {PY} -c "from src.calc import add; assert add(2, 3) == 5"
tests:
  - tests/test_calc.py::test_add
expected_outputs:
  files: [src/calc.py]
"""
# What every scripted agent starts with: its attempt number (kept beside the script, outside
# the repository), the prompt, and a helper to write files in the worktree (its cwd).
AGENT_HEAD = f"""\
import os, pathlib, subprocess, sys, tempfile
prompt = pathlib.Path(sys.argv[1]).read_text()
state = pathlib.Path(__file__).with_suffix(".count")
n = int(state.read_text() or 0) + 1 if state.exists() else 1
# whole-file replace: two missions' agents (--jobs 2) may count at once, and a reader must
# never see the file truncated by the other's write (it read "" and the agent died); the
# temporary name is unique without the pid (under bwrap every agent may have the same one)
fd, tmp = tempfile.mkstemp(dir=state.parent, prefix=state.name)
os.write(fd, str(n).encode())
os.close(fd)
os.replace(tmp, state)
GOOD = {GOOD!r}
BAD = {BAD!r}
def write(rel, text):
    path = pathlib.Path(rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
"""


@dataclass
class Snapshot:
    head: str
    status: str
    branches: str
    tracked: dict[str, str]


@dataclass
class Project:
    repo: Repo
    agents: Path

    @property
    def root(self) -> Path:
        return self.repo.root

    def agent(self, name: str, body: str) -> str:
        """A scripted agent; returns the ``--agent`` command for it."""
        script = self.agents / f"{name}.py"
        script.write_text(AGENT_HEAD + textwrap.dedent(body), encoding="utf-8")
        return f"{PY} {script} {{prompt_file}}"

    def run(self, *args: str) -> CliResult:
        return self.repo.uh("harness", "run", *args)

    def run_json(self, *args: str) -> tuple[CliResult, dict[str, Any]]:
        result = self.run(*args, "--format", "json")
        assert result.code in (0, 1), result.stderr
        assert result.stdout.strip(), f"exit {result.code} without JSON; stderr: {result.stderr}"
        return result, json.loads(result.stdout)

    def snapshot(self) -> Snapshot:
        """The main checkout as a user sees it: HEAD, status, branch, tracked file contents."""
        tracked = {}
        for rel in git(self.root, "ls-files", "-z").split("\0"):
            if rel:
                data = (self.root / rel).read_bytes()
                tracked[rel] = hashlib.sha256(data).hexdigest()
        return Snapshot(
            head=git(self.root, "rev-parse", "HEAD").strip(),
            status=git(self.root, "status", "--porcelain", "--untracked-files=all"),
            branches=git(self.root, "symbolic-ref", "HEAD").strip(),
            tracked=tracked,
        )

    def show(self, rev: str, path: str) -> str:
        return git(self.root, "show", f"{rev}:{path}")

    def events(self, path: str) -> list[dict[str, Any]]:
        file = self.root / path
        return [json.loads(line) for line in file.read_text().splitlines() if line.strip()]

    def prompts(self, mission_id: str = "calc") -> list[str]:
        files = sorted(
            (self.root / ".harness/prompts").glob(f"{mission_id}-*-attempt-*.md"),
            key=lambda p: int(p.stem.rsplit("-", 1)[1]),
        )
        return [f.read_text() for f in files]


def write_config(repo: Repo, extra: str = "", test_cmd: str | None = TEST_CMD) -> None:
    tests = f"test_cmd: {test_cmd}\n" if test_cmd else ""
    repo.write(
        "harness.config.yaml",
        f"harness_version: 1\n{tests}max_attempts: 1\n"
        # the scripted agents keep their round counters beside themselves
        f"isolation_writable: ['{agents_of(repo)}']\n" + textwrap.dedent(extra),
    )


def agents_of(repo: Repo) -> Path:
    """Where the scripted agents of ``repo`` live: ``agents/`` beside it, or the folder that
    link names (the ``project`` fixture's, one per worker)."""
    return (repo.root.parent / "agents").resolve()


@dataclass(frozen=True)
class Template:
    root: Path  # the project, committed: every copy has the same commits
    agents: Path  # the one agents folder its configuration names
    base_results: list[Path]  # what uh cached of its commit's test results, honestly run


@pytest.fixture(scope="session")
def project_template(repo_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Template:
    """The ``project`` fixture's repository, made once per worker, and the base commit's
    test results uh cached for it in one real harness run (``judge/baseline.py``: cached
    per base commit and test command).

    Every project is a copy with the same commits, so those results are valid for each;
    a test starts with them in its state folder, as the second mission of a harness run
    finds the first one's. A test that makes commits of its own gets its base run as
    before. Nothing a test wrote is taken back into the template (a test may poison its
    own cache on purpose), and ``@pytest.mark.cold_base`` starts a test without them."""
    folder = tmp_path_factory.mktemp("project-template")
    agents = tmp_path_factory.getbasetemp() / "project-agents"
    agents.mkdir(exist_ok=True)
    (folder / "agents").symlink_to(agents)
    repo = copy_repo(repo_template, folder / "repo")
    repo.write(".gitignore", "__pycache__/\n.pytest_cache/\n*.log\n")
    repo.write("src/calc.py", "def add(a, b):\n    raise NotImplementedError\n")
    repo.write("tests/test_calc.py", TESTS)
    repo.mission("calc", MISSION)
    write_config(repo)
    repo.commit("project")
    return Template(repo.root, agents, _base_results(folder, repo.root, agents))


def _base_results(folder: Path, template: Path, agents: Path) -> list[Path]:
    """One harness run on a copy of the template (a state folder of its own) with an agent
    that does the work: its gate runs the base commit's tests and caches their results."""
    work = folder / "run"
    work.mkdir()
    repo = copy_repo(template, work / "repo")
    state = work / "state"
    script = agents / "template-good.py"
    script.write_text(f"import pathlib\npathlib.Path('src/calc.py').write_text({GOOD!r})\n")
    # the session's environment, not the monkeypatches of the test that asked first
    env = {**warm.START_ENV, "UH_STATE_DIR": str(state)}
    done = subprocess.run(
        [PY, "-m", "uh_core", "harness", "run", "--agent", f"{PY} {script} {{prompt_file}}",
         "--root", str(repo.root)],
        env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    script.unlink()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    head = git(repo.root, "rev-parse", "HEAD").strip()
    found = sorted(state.glob(f"repos/*/base-results/{head}-*.json"))
    assert found, f"the template's harness run cached no base results under {state}"
    return found


@pytest.fixture
def project(tmp_path: Path, request: pytest.FixtureRequest, _state_dir: Path) -> Project:
    """A copy of the project template at ``tmp_path/repo`` (where ``repo`` would put its
    own: a test cannot ask for both unnoticed, the second copy finds the folder taken)."""
    started = time.monotonic()
    project_template: Template = request.getfixturevalue("project_template")
    shared_setup(request, time.monotonic() - started)  # made once: the first test's setup
    repo = copy_repo(project_template.root, tmp_path / "repo")
    agents = project_template.agents
    shutil.rmtree(agents)  # the previous test's scripts and counters
    agents.mkdir()
    (repo.root.parent / "agents").symlink_to(agents)
    if request.node.get_closest_marker("cold_base") is None:
        cache = Layout(repo.root).state_dir / "base-results"
        cache.mkdir(parents=True)
        for path in project_template.base_results:
            shutil.copyfile(path, cache / path.name)
    return Project(repo, agents)


def stage_names(requirement: dict[str, Any], attempt: int = -1) -> list[str]:
    return [s["stage"] for s in requirement["attempts"][attempt]["stages"]]


def failing(requirement: dict[str, Any], attempt: int = -1) -> dict[str, Any]:
    stages = requirement["attempts"][attempt]["stages"]
    return next(s for s in stages if not s["passed"])
