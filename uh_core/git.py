"""Git plumbing the engine needs, each call through the one subprocess helper.

Every git command the engine runs goes through ``git_run`` (or ``git``, its text form), and
none of them can be steered by what an agent wrote, nor by anything outside the repository:

- global and system configuration are off (``GIT_CONFIG_GLOBAL=/dev/null``,
  ``GIT_CONFIG_NOSYSTEM=1``), and so are the attribute and ignore files git reads by default
  without any configuration (``core.attributesFile`` and ``core.excludesFile`` point at
  ``/dev/null``; ``GIT_ATTR_NOSYSTEM=1``): no filter, textconv, diff or merge driver, hook
  path, fsmonitor or alias from ``~/.gitconfig`` or ``$XDG_CONFIG_HOME/git/`` reaches an
  engine command. Only the repository's own configuration applies, and the tamper snapshot
  covers it (and the operator's files outside it: ``uh_core.security.tamper``);
- replace objects are ignored (``GIT_NO_REPLACE_OBJECTS``), no hook can run
  (``core.hooksPath`` points at ``/dev/null``, which holds no hook), the fsmonitor is off;
- the inherited environment is cleaned of every variable that would point git at another
  repository, index or configuration (``GIT_DIR``, ``GIT_INDEX_FILE``, ``GIT_CONFIG_*``, …).
  A caller may still set some of them on purpose through ``env`` (a temporary
  ``GIT_INDEX_FILE``).

Two things are taken from the operator's own configuration as plain values, read once per
process by ``git config --get-regexp`` (which runs nothing): their identity and their
``safe.directory`` entries (``uh_core.git_operator``). Commit-making commands get the
identity as ``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` where neither the environment nor the
repository's config names one (``commit_identity``).

A sandbox's own ``.git`` is the agent's: the engine never runs git with it. Judging a
sandbox uses the operator's git directory with the sandbox as the work tree
(``work_tree=``), so only the operator's (tamper-checked) configuration applies.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from uh_core.errors import GitError
from uh_core.git_operator import (
    DEFAULT_EMAIL,
    DEFAULT_NAME,
    OperatorGit,
    identity_env,
    read_operator_git,
)
from uh_core.proc import Captured, run_capture

# Settings no repository configuration may override for the engine's own git commands.
SAFE_CONFIG: tuple[str, ...] = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "commit.gpgSign=false",
    "-c", "tag.gpgSign=false",
    "-c", "diff.external=",
    "-c", "core.attributesFile=/dev/null",  # else $XDG_CONFIG_HOME/git/attributes
    "-c", "core.excludesFile=/dev/null",  # else $XDG_CONFIG_HOME/git/ignore
)  # fmt: skip
# The environment that turns every configuration outside the repository off.
OUTSIDE_OFF = {
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_SYSTEM": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ATTR_NOSYSTEM": "1",
}
# Commands that write a commit or tag object, or report the identity one would carry.
COMMIT_MAKING = frozenset(
    {"commit-tree", "commit", "merge", "tag", "notes", "stash", "cherry-pick", "revert",
     "rebase", "am", "var"}
)  # fmt: skip

# Inherited variables that would make git read another repository, index, object store or
# configuration than the one the engine names.
_DROPPED = frozenset(
    {
        "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
        "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_REPLACE_REF_BASE",
        "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_ATTR_NOSYSTEM",
        "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE", "GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS",
        "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        "GIT_OPTIONAL_LOCKS", "GIT_QUARANTINE_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
    }
)  # fmt: skip


def _cleaned() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if key not in _DROPPED
        and not key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "GIT_TRACE"))
    }


def safe_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without the variables above, with configuration outside
    the repository and replace objects off, and ``extra`` on top: the complete environment
    of an engine git command."""
    env = _cleaned()
    env.update(OUTSIDE_OFF)
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    env["GIT_TERMINAL_PROMPT"] = "0"
    if extra:
        env.update(extra)
    return env


def operator_env() -> dict[str, str]:
    """The environment the operator's own git would see (cleaned of the repository- and
    index-pointing variables only): for reading their configuration as values, never for a
    command that could run a driver, a hook or an fsmonitor."""
    env = _cleaned()
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"):
        if name in os.environ:
            env[name] = os.environ[name]
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


@functools.cache
def operator_git() -> OperatorGit:
    """The operator's identity and ``safe.directory`` entries, read once per process."""
    return read_operator_git(operator_env())


def trusted_config() -> tuple[str, ...]:
    """``-c safe.directory=…`` for each entry of the operator's: git honours them only from
    protected configuration, which is off, so a repository owned by another user (a
    container's mount) still works for the engine as it does for the operator."""
    return tuple(
        arg
        for entry in operator_git().safe_directories
        for arg in ("-c", f"safe.directory={entry}")
    )


def _repo_identity(cwd: Path, git_dir: Path | None) -> dict[str, str]:
    """The repository's own ``user.*``/``author.*``/``committer.*`` (lowercased keys)."""
    found = _run(
        cwd, ["config", "--get-regexp", r"^(user|author|committer)\.(name|email)$"],
        git_dir=git_dir, env=None, stdin=None, timeout=30,
    )  # fmt: skip
    repo: dict[str, str] = {}
    for line in found.stdout.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        if value.strip():
            repo[key.lower()] = value.strip()
    return repo


def commit_identity(cwd: Path, *, git_dir: Path | None = None) -> dict[str, str]:
    """``GIT_AUTHOR_*``/``GIT_COMMITTER_*`` for a commit made in ``cwd``: a variable already
    in the environment is git's to read, so is an identity the repository's config gives
    (``user.*``, ``author.*``, ``committer.*``); the rest come from the operator's own
    configuration, else the default ``uh <uh@localhost>`` (``uh_core.git_operator``)."""
    return identity_env(_repo_identity(cwd, git_dir), operator_git(), os.environ)


def identity_config(root: Path) -> dict[str, str]:
    """``user.name`` and ``user.email`` for a repository the engine makes from ``root`` (a
    sandbox, a worker's clone), so commits made there work: ``root``'s own, else the
    operator's, else the default."""
    repo, operator = _repo_identity(root, None), operator_git()
    email = operator.email or os.environ.get("EMAIL") or DEFAULT_EMAIL
    return {
        "user.name": repo.get("user.name") or operator.name or DEFAULT_NAME,
        "user.email": repo.get("user.email") or email,
    }


def git_argv(
    args: Sequence[str], *, git_dir: Path | None = None, work_tree: Path | None = None
) -> list[str]:
    argv = ["git", *SAFE_CONFIG, *trusted_config()]
    if git_dir is not None:
        argv.append(f"--git-dir={git_dir}")
    if work_tree is not None:
        argv.append(f"--work-tree={work_tree}")
    return [*argv, *args]


def git_run(
    cwd: Path,
    *args: str,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float = 300,
) -> Captured:
    """Run ``git args`` safely (see the module docstring); the captured result, any exit.
    A commit-making command gets ``commit_identity`` under ``env``."""
    if args and args[0] in COMMIT_MAKING:
        env = {**commit_identity(cwd, git_dir=git_dir), **(env or {})}
    return _run(
        cwd, args, git_dir=git_dir, work_tree=work_tree, env=env, stdin=stdin, timeout=timeout
    )


def _run(
    cwd: Path,
    args: Sequence[str],
    *,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    env: Mapping[str, str] | None,
    stdin: bytes | None,
    timeout: float,
) -> Captured:
    argv = git_argv(args, git_dir=git_dir, work_tree=work_tree)
    return run_capture(
        argv, cwd=cwd, env=safe_env(env), env_is_complete=True, timeout=timeout, stdin=stdin
    )


def git(
    root: Path,
    *args: str,
    timeout: float = 300,
    env: dict[str, str] | None = None,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    stdin: bytes | None = None,
) -> str:
    """Run ``git args`` in ``root``; its stdout as text, or GitError naming the command."""
    result = git_run(
        root, *args, git_dir=git_dir, work_tree=work_tree, env=env, stdin=stdin, timeout=timeout
    )
    if result.timed_out:
        raise GitError(f"git {' '.join(args)} timed out after {timeout:.0f} s in {root}")
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = detail[-1] if detail else f"exit {result.returncode}"
        raise GitError(f"git {' '.join(args)} failed in {root}: {reason}")
    return result.stdout.decode("utf-8", "replace")


def is_repository(root: Path) -> bool:
    return git_run(root, "rev-parse", "--git-dir", timeout=30).returncode == 0


def resolve_commit(root: Path, rev: str, *, git_dir: Path | None = None) -> str:
    if rev.startswith("-"):
        raise GitError(f"invalid revision {rev!r}")
    result = git_run(
        root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", git_dir=git_dir, timeout=30
    )
    if result.returncode != 0:
        raise GitError(f"{rev!r} is not a commit in {root}")
    return result.stdout.decode().strip()


def common_dir(root: Path) -> Path:
    """The repository's git directory shared by all its worktrees (objects, refs, config)."""
    text = git(root, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
    return Path(text)


def run_git(
    args: Sequence[str],
    *,
    cwd: Path,
    timeout: float = 300,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
) -> Captured:
    """``git_run`` in ``run_capture``'s shape: ``run_git(["status"], cwd=root)``."""
    return git_run(cwd, *args, env=env, stdin=stdin, timeout=timeout)
