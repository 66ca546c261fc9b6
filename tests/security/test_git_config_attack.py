"""The operator's git configuration outside the repository (issue 30, attack 3).

Code run by the agent or the gate appends a ``filter.<x>.smudge`` driver and a
``core.attributesFile`` to ``~/.gitconfig`` (or writes ``$XDG_CONFIG_HOME/git/``). The
engine's own git must never run that driver (its global and system configuration are off),
and the change must end the run ``tampered``, named. ``HOME`` and ``XDG_CONFIG_HOME`` point
at a folder of the test's own for the whole run: the real ``~/.gitconfig`` is never touched.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV
from tests.harness.conftest import GOOD, Project
from tests.security.conftest import FIND_OPERATOR
from uh_core import git as engine_git
from uh_core.git import git, git_run
from uh_core.security import compare, snapshot_repo

HONEST = 'write("src/calc.py", GOOD)\n'


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty ``HOME`` of the test's own (no ``.gitconfig``), ``XDG_CONFIG_HOME`` unset."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    for name in GIT_ENV:
        monkeypatch.delenv(name, raising=False)
    clear = getattr(engine_git, "operator_git", None)
    if clear is not None:
        clear.cache_clear()
    yield folder
    if clear is not None:
        clear.cache_clear()


def driver(marker: Path, name: str = "x") -> str:
    """A filter driver whose every use leaves ``marker`` behind (and passes content on)."""
    return f'[filter "{name}"]\n\tsmudge = touch {marker} && cat\n\tclean = touch {marker} && cat\n'


def plain_git(root: Path, *args: str) -> str:
    """The test's own git, blind to the hostile configuration (it would run the driver)."""
    env = {**os.environ, **GIT_ENV, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def operator_git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The operator's own git, as it would run in their shell (global config read)."""
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True)


# --- (a) an unconfined agent, or the gate's code, writes the operator's global config ---------


def test_an_agent_appending_a_smudge_driver_to_the_global_config(
    project: Project, home: Path, isolation: str, tmp_path: Path
) -> None:
    marker = tmp_path / "driver-ran"
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Ada\n\temail = ada@example.invalid\n")
    before = gitconfig.read_bytes()
    body = f"""
write(".gitattributes", "*.py filter=x\\n")
def reach():
    home = pathlib.Path(os.environ["HOME"])
    (home / "attrs").write_text("* filter=x\\n")
    with open(home / ".gitconfig", "a") as handle:
        handle.write({driver(marker)!r} + "[core]\\n\\tattributesFile = " + str(home / "attrs") + "\\n")
attempt(reach)
"""
    agent = project.agent("attacker", FIND_OPERATOR + HONEST + body)
    result, data = project.run_json("--agent", agent, "--isolation", isolation)
    assert not marker.exists(), "the engine's git ran the agent's filter driver"
    if isolation == "bwrap":
        assert result.code == 0, data
        assert gitconfig.read_bytes() == before
    else:
        assert result.code == 1 and data["status"] == "tampered", data
        assert any("global git config ~/.gitconfig" in c for c in data["tampered"]), data
        assert data["requirements"][0]["commit"] is None


def test_gate_code_writing_the_xdg_git_folder_is_tampered(
    project: Project, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The module the gate imports writes ``$XDG_CONFIG_HOME/git/{config,attributes}``
    (where the gate's checks run confined, the write is refused: nothing changed)."""
    marker = tmp_path / "driver-ran"
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    module = (
        "import pathlib as _p\n"
        "try:\n"
        f"    _g = _p.Path({str(xdg)!r}) / 'git'\n"
        "    _g.mkdir(parents=True, exist_ok=True)\n"
        f"    (_g / 'config').write_text({driver(marker)!r})\n"
        "    (_g / 'attributes').write_text('* filter=x\\n')\n"
        "except OSError:\n"
        "    pass\n" + GOOD
    )
    agent = project.agent("gatecode", f"write('src/calc.py', {module!r})\n")
    result, data = project.run_json("--agent", agent, "--isolation", "none")
    assert not marker.exists(), "the engine's git ran the gate code's filter driver"
    if not (xdg / "git/config").exists():  # the gate's checks ran confined
        assert result.code == 0 and not data["tampered"], data
        return
    assert result.code == 1 and data["status"] == "tampered", data
    named = " ".join(data["tampered"])
    assert "global git config" in named and "git/config" in named and "git/attributes" in named


def test_promote_never_runs_a_driver_someone_put_in_the_global_config(
    project: Project, home: Path, tmp_path: Path
) -> None:
    """A green branch carrying ``.gitattributes``; then the global config gains a driver for
    it (by someone else, after the run). Promote's checkout must not run it."""
    marker = tmp_path / "driver-ran"
    agent = project.agent("honest", HONEST + 'write(".gitattributes", "*.py filter=x\\n")\n')
    result, data = project.run_json("--agent", agent, "--isolation", "none")
    assert result.code == 0, data
    (home / ".gitconfig").write_text(driver(marker) + "[core]\n\tattributesFile = ~/attrs\n")
    (home / "attrs").write_text("* filter=x\n")
    xdg = home / ".config/git"
    xdg.mkdir(parents=True)
    (xdg / "config").write_text(driver(marker, "y"))
    (xdg / "attributes").write_text("* filter=y\n")
    promoted = project.repo.uh(
        "promote", "calc", "--branch", "harness/calc", "--approved-by", "a", "--accept-unconfined"
    )
    assert promoted.code == 0, promoted.stdout + promoted.stderr
    assert not marker.exists(), "promote ran a filter driver from outside the repository"
    assert (project.root / "src/calc.py").read_text() == GOOD
    assert (project.root / ".gitattributes").read_text() == "*.py filter=x\n"
    # the same checkout by the operator's own git would have run it: the attack was real
    operator_git(project.root, "rm", "-q", "--cached", "src/calc.py")
    assert operator_git(project.root, "add", "src/calc.py").returncode == 0
    assert marker.exists()


# --- (b) the engine's git reads nothing outside the repository ------------------------------


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    plain_git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("print('a')\n")
    (root / ".gitattributes").write_text("*.py diff=x\n")
    plain_git(root, "add", "-A")
    plain_git(root, "commit", "-q", "-m", "one")
    return root


@pytest.mark.parametrize("where", ["home", "xdg", "env-global", "env-system"])
def test_engine_git_ignores_config_and_attributes_outside_the_repository(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    root = _repo(tmp_path)
    marker = tmp_path / "driver-ran"
    hostile = (
        driver(marker)
        + f'[diff "x"]\n\ttextconv = touch {marker} && cat\n'
        + f"[core]\n\tfsmonitor = touch {marker}\n\thooksPath = {tmp_path / 'hooks'}\n"
        + "[user]\n\tname = Hostile\n\temail = hostile@example.invalid\n"
    )
    config = {
        "home": home / ".gitconfig",
        "xdg": tmp_path / "xdg/git/config",
        "env-global": tmp_path / "elsewhere.gitconfig",
        "env-system": tmp_path / "system.gitconfig",
    }[where]
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(hostile)
    (tmp_path / "xdg/git").mkdir(parents=True, exist_ok=True)
    (tmp_path / "xdg/git/attributes").write_text("* filter=x\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    if where == "env-global":
        monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    if where == "env-system":
        monkeypatch.setenv("GIT_CONFIG_SYSTEM", str(config))
        (tmp_path / "xdg/git/attributes").unlink()
        (root / ".git/info/attributes").write_text("* filter=x\n")  # the repository's own
    (tmp_path / "hooks").mkdir()
    (tmp_path / "hooks/post-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (tmp_path / "hooks/post-commit").chmod(0o755)
    (root / "a.py").write_text("print('b')\n")
    # what the operator's own git does with it: the attack is real
    assert operator_git(root, "add", "a.py").returncode == 0
    assert marker.exists()
    marker.unlink()
    plain_git(root, "reset", "-q")
    # the engine's git: add (clean), diff (textconv), status (fsmonitor), hash-object,
    # commit (hooks, identity), checkout (smudge)
    git(root, "add", "a.py")
    git(root, "diff", "--cached", "--no-ext-diff")
    git(root, "status", "--porcelain")
    git(root, "hash-object", "a.py")
    git(root, "commit", "-q", "-m", "two")
    (root / "a.py").unlink()
    git(root, "checkout", "--", "a.py")
    assert not marker.exists(), f"the engine's git used configuration from {where}"
    author = git(root, "log", "-1", "--format=%an <%ae>").strip()
    assert author == "Hostile <hostile@example.invalid>"  # values only: the identity


def test_the_tamper_snapshot_names_the_operators_git_configuration(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n")
    before = snapshot_repo(root)
    with open(home / ".gitconfig", "a") as handle:
        handle.write('[filter "x"]\n\tsmudge = cat\n')
    for name in ("config", "attributes", "ignore"):
        path = tmp_path / "xdg/git" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# planted\n")
    (root / ".git/info/attributes").write_text("* filter=x\n")
    found = [change.describe() for change in compare(before, snapshot_repo(root))]
    assert "global git config ~/.gitconfig changed" in found, found
    for name in ("config", "attributes", "ignore"):
        assert f"global git config {tmp_path / 'xdg/git' / name} created" in found, found
    assert any(".git/info/attributes" in line for line in found), found
    again = snapshot_repo(root)
    assert compare(again, snapshot_repo(root)) == []


def test_a_symlinked_gitconfig_is_described_not_followed(home: Path, tmp_path: Path) -> None:
    root = _repo(tmp_path)
    target = tmp_path / "real.gitconfig"
    target.write_text("[user]\n\tname = Ada\n")
    (home / ".gitconfig").symlink_to(target)
    before = snapshot_repo(root)
    target.write_text("[user]\n\tname = Eve\n")  # the link itself did not change
    assert compare(before, snapshot_repo(root)) == []
    (home / ".gitconfig").unlink()
    (home / ".gitconfig").symlink_to(tmp_path / "other")
    found = [change.describe() for change in compare(before, snapshot_repo(root))]
    assert any(line.startswith("global git config ~/.gitconfig changed") for line in found)


# --- (c) identity without the operator's global configuration -------------------------------


def test_identity_rule(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from uh_core.git import commit_identity

    root = _repo(tmp_path)
    assert commit_identity(root)["GIT_AUTHOR_NAME"] == "uh"  # nothing configured anywhere
    assert commit_identity(root)["GIT_COMMITTER_EMAIL"] == "uh@localhost"
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n\temail = ada@example.invalid\n")
    engine_git.operator_git.cache_clear()
    found = commit_identity(root)
    assert found["GIT_AUTHOR_NAME"] == found["GIT_COMMITTER_NAME"] == "Ada"
    assert found["GIT_AUTHOR_EMAIL"] == "ada@example.invalid"
    plain_git(root, "config", "user.name", "Repo Person")  # the repository's own wins
    found = commit_identity(root)
    assert "GIT_AUTHOR_NAME" not in found and found["GIT_AUTHOR_EMAIL"] == "ada@example.invalid"
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "env@example.invalid")  # the environment wins
    assert "GIT_COMMITTER_EMAIL" not in commit_identity(root)
    git(root, "commit", "-q", "--allow-empty", "-m", "three")
    who = git(root, "log", "-1", "--format=%an <%ae> / %cn <%ce>").strip()
    assert who == "Repo Person <ada@example.invalid> / Repo Person <env@example.invalid>"
    done = git_run(root, "commit-tree", "HEAD^{tree}", "-m", "x", env={"GIT_AUTHOR_NAME": "Own"})
    shown = git(root, "log", "-1", "--format=%an", done.stdout.decode().strip())
    assert shown.strip() == "Own"  # a caller's own identity is kept


def test_an_honest_run_commits_without_any_gitconfig(
    project: Project, home: Path, isolation: str
) -> None:
    agent = project.agent("honest", HONEST)
    result, data = project.run_json("--agent", agent, "--isolation", isolation)
    assert result.code == 0, data
    commit = data["requirements"][0]["commit"]
    who = plain_git(project.root, "log", "-1", "--format=%an <%ae>", commit).strip()
    assert who == "uh <uh@localhost>"
    promoted = project.repo.uh(
        "promote", "calc", "--branch", "harness/calc", "--approved-by", "a", "--accept-unconfined"
    )
    assert promoted.code == 0, promoted.stdout + promoted.stderr
    assert plain_git(project.root, "log", "-1", "--format=%an").strip() == "uh"


def test_an_honest_run_commits_as_the_operator_of_home(project: Project, home: Path) -> None:
    (home / ".gitconfig").write_text("[user]\n\tname = Ada\n\temail = ada@example.invalid\n")
    agent = project.agent(
        "committer", HONEST + 'subprocess.run(["git", "commit", "-qam", "mine"], check=True)\n'
    )
    result, data = project.run_json("--agent", agent, "--isolation", "none")
    assert result.code == 0, data
    commit = data["requirements"][0]["commit"]
    who = plain_git(project.root, "log", "-1", "--format=%an <%ae>", commit).strip()
    assert who == "Ada <ada@example.invalid>"
