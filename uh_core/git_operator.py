"""What the engine takes from the operator's own git configuration: values, never drivers.

The engine's git runs with global and system configuration off (``uh_core.git``), so a
filter, hook path or fsmonitor someone put in ``~/.gitconfig`` never runs. Two things from
that configuration are still wanted, and both are plain values:

- **the identity** of the commits the engine makes (the harness's green commit, a
  promotion): ``user.name``/``user.email``;
- **``safe.directory``**, which git honours only from protected configuration: without it
  a repository owned by another user (a container's bind mount) could not be used at all.

They are read with ``git config --includes --get-regexp`` (global, then system scope), in a
folder where no repository is found: reading a value runs nothing. Every value is taken as
text; none is ever executed.

The identity rule, per variable (``GIT_AUTHOR_NAME``, ``GIT_AUTHOR_EMAIL``,
``GIT_COMMITTER_NAME``, ``GIT_COMMITTER_EMAIL``), first match wins:

1. the variable in the environment (git reads it there itself);
2. the repository's own config: ``author.*``/``committer.*``, then ``user.*`` (git reads it);
3. the operator's ``user.*`` (global, then system configuration; ``$EMAIL`` for the email);
4. ``uh <uh@localhost>`` (``DEFAULT_NAME``, ``DEFAULT_EMAIL``): a fresh machine works.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from uh_core.errors import ProcError
from uh_core.proc import run_capture

DEFAULT_NAME = "uh"
DEFAULT_EMAIL = "uh@localhost"
_KEYS = r"^(user\.(name|email)|safe\.directory)$"
_NOWHERE = "/"  # no repository is looked for above the root with GIT_CEILING_DIRECTORIES
_FIELDS = (("NAME", "name"), ("EMAIL", "email"))


@dataclass(frozen=True)
class OperatorGit:
    """The values taken from the operator's configuration (None: not configured)."""

    name: str | None = None
    email: str | None = None
    safe_directories: tuple[str, ...] = ()


def read_operator_git(env: Mapping[str, str]) -> OperatorGit:
    """The operator's identity and ``safe.directory`` entries, global over system."""
    values: dict[str, str] = {}
    safe: list[str] = []
    for scope in ("--system", "--global"):  # later wins for the identity
        for key, value in _read(scope, env):
            if key == "safe.directory":
                safe = [] if value == "" else [*safe, value]  # an empty value resets
            elif value:
                values[key] = value
    return OperatorGit(values.get("user.name"), values.get("user.email"), tuple(safe))


def _read(scope: str, env: Mapping[str, str]) -> list[tuple[str, str]]:
    argv = ["git", "config", scope, "--includes", "--null", "--get-regexp", _KEYS]
    quiet = {**env, "GIT_CEILING_DIRECTORIES": _NOWHERE}
    try:
        found = run_capture(argv, cwd=Path(_NOWHERE), env=quiet, env_is_complete=True, timeout=30)
    except ProcError:
        return []
    if found.returncode != 0:  # 1: none set; anything else: unreadable, treated as none
        return []
    pairs = []
    for record in found.stdout.decode("utf-8", "replace").split("\0"):
        key, _, value = record.partition("\n")
        if key:
            pairs.append((key.lower(), value))
    return pairs


def identity_env(
    repo: Mapping[str, str], operator: OperatorGit, environ: Mapping[str, str]
) -> dict[str, str]:
    """The identity variables the engine must set for a commit (the rule above); ``repo``
    maps the repository's lowercased ``user.name``, ``author.email``, … to their values."""
    given = {"name": operator.name, "email": operator.email or environ.get("EMAIL") or None}
    default = {"name": DEFAULT_NAME, "email": DEFAULT_EMAIL}
    env: dict[str, str] = {}
    for role in ("AUTHOR", "COMMITTER"):
        for upper, field in _FIELDS:
            variable = f"GIT_{role}_{upper}"
            if environ.get(variable):
                continue
            if repo.get(f"{role.lower()}.{field}") or repo.get(f"user.{field}"):
                continue
            env[variable] = given[field] or default[field]
    return env
