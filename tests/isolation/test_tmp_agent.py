"""An agent installed under /tmp starts under bubblewrap, whose /tmp is private: what its
command resolves to (on PATH, through symlinks, its script's interpreter) is bound read-only;
one that cannot be followed is refused before anything starts, naming the path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.runtime.helpers import add_manifest
from uh_core.errors import IsolationError
from uh_core.isolation import bwrap_available, wrap_argv
from uh_core.isolation.command import command_binds

needs_bwrap = pytest.mark.skipif(not bwrap_available()[0], reason="bubblewrap cannot run here")
MISSION = "id: m\ntitle: fix a\nacceptance_criteria:\n  - id: fixed\n    check_command: grep -q fixed a.txt\n"
AGENT = """\
import pathlib, sys
pathlib.Path(sys.argv[1]).read_text()  # the prompt
with open("a.txt", "a") as out:
    out.write("fixed by " + sys.prefix + "\\n")
"""


@pytest.fixture
def under_tmp() -> Iterator[Path]:
    """A folder directly under /tmp, as a user's `pip install --prefix /tmp/x` would make."""
    folder = Path(tempfile.mkdtemp(prefix="uh-agent-", dir="/tmp"))
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def _venv_agent(folder: Path) -> Path:
    """A virtualenv under ``folder`` with a console script ``fix-agent`` (shebang: the
    venv's python, a symlink to the interpreter outside /tmp)."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    script = venv / "bin" / "fix-agent"
    script.write_text(f"#!{venv}/bin/python\n{AGENT}", encoding="utf-8")
    script.chmod(0o755)
    return venv


def test_binds_follow_path_links_and_the_interpreter(under_tmp: Path) -> None:
    venv = _venv_agent(under_tmp)
    path = f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"
    assert command_binds(["fix-agent", "x"], path) == [venv.resolve()]
    # an npm-style CLI: a link in the prefix's bin into the package under node_modules
    package = under_tmp / "npm" / "lib" / "node_modules" / "@acme" / "cli"
    (package / "bin").mkdir(parents=True)
    (package / "bin" / "cli.js").write_text("#!/bin/sh\necho hi\n", encoding="utf-8")
    (package / "bin" / "cli.js").chmod(0o755)
    bin_dir = under_tmp / "npm" / "bin"
    bin_dir.mkdir()
    (bin_dir / "acme").symlink_to("../lib/node_modules/@acme/cli/bin/cli.js")
    binds = command_binds(["acme"], str(bin_dir))
    assert binds == [(under_tmp / "npm").resolve(), (under_tmp / "npm/lib/node_modules").resolve()]
    # a shebang through env: the interpreter found on PATH, under /tmp too
    script = under_tmp / "tools" / "run.sh"
    script.parent.mkdir()
    script.write_text("#!/usr/bin/env fix-agent\n", encoding="utf-8")
    script.chmod(0o755)
    assert command_binds([str(script)], path) == [script.parent.resolve(), venv.resolve()]
    # a command runtime's line, run by sh -c: its first command is followed too
    line = ["/bin/sh", "-c", "FOO=1 exec fix-agent /x/prompt.md"]
    assert command_binds(line, path) == [venv.resolve()]
    # nothing under /tmp: nothing to bind
    assert command_binds(["sh", "-c", "true"]) == []


def test_a_dangling_command_under_tmp_is_refused(under_tmp: Path) -> None:
    (under_tmp / "bin").mkdir()
    (under_tmp / "bin" / "aider").symlink_to(under_tmp / "gone" / "aider")
    with pytest.raises(IsolationError) as caught:
        wrap_argv(
            [str(under_tmp / "bin" / "aider")],
            writable=[under_tmp / "w"],
            readable=[],
            cwd=under_tmp / "w",
        )
    assert caught.value.fix is not None and "outside /tmp" in caught.value.fix
    with pytest.raises(IsolationError) as caught:
        command_binds(["aider"], str(under_tmp / "bin"))
    assert str(under_tmp / "bin" / "aider") in caught.value.message


@needs_bwrap
def test_mission_run_of_an_agent_installed_under_tmp(
    repo: Repo, under_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = _venv_agent(under_tmp)
    monkeypatch.setenv("PATH", f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    repo.write("a.txt", "hello\n")
    repo.mission("m", MISSION)
    add_manifest(
        repo, "tmpagent", "runtime_kind: command\nstatus: active\nconfig:\n"
        "  command: fix-agent {prompt_file}\n",
    )  # fmt: skip
    repo.commit("setup")
    result = repo.uh(
        "mission", "run", "m", "--runtime", "tmpagent", "--isolation", "bwrap", "--json"
    )
    data = json.loads(result.stdout)
    assert data["status"] == "succeeded", (result.stderr, data)
    assert data["touched_paths"] == ["a.txt"]
    worktree = next((repo.root / ".harness").rglob("worktree"), None)
    assert worktree is None or worktree.is_dir()


@needs_bwrap
def test_harness_refuses_a_dangling_tmp_agent_before_starting(repo: Repo, under_tmp: Path) -> None:
    (under_tmp / "bin").mkdir()
    agent = under_tmp / "bin" / "aider"
    agent.symlink_to(under_tmp / "gone" / "aider")
    repo.mission("m", MISSION)
    repo.commit("setup")
    command = f"{agent} {{prompt_file}}"
    plan = repo.uh("harness", "plan", "--json", "--agent", command, "--isolation", "bwrap")
    blockers = json.loads(plan.stdout)["run_blockers"]
    assert [b["code"] for b in blockers] == ["agent_hidden"]
    assert str(agent) in blockers[0]["message"] and "outside /tmp" in blockers[0]["fix"]
    run = repo.uh("harness", "run", "--agent", command, "--isolation", "bwrap")
    assert run.code == 2 and blockers[0]["message"] in " ".join(run.stderr.split())
    assert not (repo.root / ".harness/runs").exists() or not any(
        (repo.root / ".harness/runs").glob("*.json")
    )
