"""Git plumbing the engine needs, each call through the one subprocess helper."""

from __future__ import annotations

from pathlib import Path

from uh_core.errors import GitError
from uh_core.proc import run_capture


def git(root: Path, *args: str, timeout: float = 300, env: dict[str, str] | None = None) -> str:
    """Run ``git args`` in ``root``; its stdout as text, or GitError naming the command."""
    result = run_capture(["git", *args], cwd=root, timeout=timeout, env=env)
    if result.timed_out:
        raise GitError(f"git {' '.join(args)} timed out after {timeout:.0f} s in {root}")
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", "replace").strip().splitlines()
        reason = detail[-1] if detail else f"exit {result.returncode}"
        raise GitError(f"git {' '.join(args)} failed in {root}: {reason}")
    return result.stdout.decode("utf-8", "replace")


def is_repository(root: Path) -> bool:
    result = run_capture(["git", "rev-parse", "--git-dir"], cwd=root, timeout=30)
    return result.returncode == 0


def resolve_commit(root: Path, rev: str) -> str:
    if rev.startswith("-"):
        raise GitError(f"invalid revision {rev!r}")
    result = run_capture(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=root, timeout=30
    )
    if result.returncode != 0:
        raise GitError(f"{rev!r} is not a commit in {root}")
    return result.stdout.decode().strip()
