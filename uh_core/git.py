"""Git plumbing the engine needs, each call through the one subprocess helper.

Every git command the engine runs goes through ``git_run`` (or ``git``, its text form), and
none of them can be steered by what an agent wrote: replace objects are ignored
(``GIT_NO_REPLACE_OBJECTS``), no hook can run (``core.hooksPath`` points at ``/dev/null``,
which holds no hook), the fsmonitor is off, and the inherited environment is cleaned of
every variable that would point git at another repository, index or configuration
(``GIT_DIR``, ``GIT_INDEX_FILE``, ``GIT_CONFIG_*``, …). A caller may still set some of
them on purpose through ``env`` (a temporary ``GIT_INDEX_FILE``).

A sandbox's own ``.git`` is the agent's: the engine never runs git with it. Judging a
sandbox uses the operator's git directory with the sandbox as the work tree
(``work_tree=``), so only the operator's (tamper-checked) configuration applies.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from uh_core.errors import GitError
from uh_core.proc import Captured, run_capture

# Settings no repository configuration may override for the engine's own git commands.
SAFE_CONFIG: tuple[str, ...] = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.untrackedCache=false",
    "-c", "commit.gpgSign=false",
    "-c", "tag.gpgSign=false",
    "-c", "diff.external=",
)  # fmt: skip

# Inherited variables that would make git read another repository, index, object store or
# configuration than the one the engine names.
_DROPPED = frozenset(
    {
        "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE",
        "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_REPLACE_REF_BASE",
        "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE", "GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS",
        "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
        "GIT_OPTIONAL_LOCKS", "GIT_QUARANTINE_PATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
    }
)  # fmt: skip


def safe_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without the variables above, with replace objects off,
    and ``extra`` on top: the complete environment of an engine git command."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _DROPPED
        and not key.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "GIT_TRACE"))
    }
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    env["GIT_TERMINAL_PROMPT"] = "0"
    if extra:
        env.update(extra)
    return env


def git_argv(
    args: Sequence[str], *, git_dir: Path | None = None, work_tree: Path | None = None
) -> list[str]:
    argv = ["git", *SAFE_CONFIG]
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
    """Run ``git args`` safely (see the module docstring); the captured result, any exit."""
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
