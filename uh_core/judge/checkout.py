"""A pristine checkout of exactly the judged tree: the only place the gate runs the agent's
code.

The gate never runs checks in the sandbox the agent worked in: that folder holds more than
the commit (ignored files, bytecode caches, a planted ``__pycache__/*.pyc`` that shadows a
module, files the agent's processes are still writing). The tree the gate judges is
written out from the operator's object store into a fresh folder — nothing untracked,
nothing ignored — with a temporary index outside it, by the engine's git (no hooks, no
filters from outside the repository). The checkout is removed when the stage ends.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from uh_core.errors import GitError
from uh_core.git import git_run
from uh_core.sandbox.worktree import remove_tree

CHECKOUT_TIMEOUT_S = 600.0


def write_tree(git_dir: Path, tree: str, dest: Path) -> None:
    """Write ``tree`` (a tree or commit id in ``git_dir``) into the empty folder ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    fd, index = tempfile.mkstemp(prefix="uh-judge-index-", dir=dest.parent)
    os.close(fd)
    os.unlink(index)  # git writes it new: an empty file is not an index
    try:
        done = git_run(
            dest,
            "read-tree",
            "--reset",
            "-u",
            f"{tree}^{{tree}}",
            git_dir=git_dir,
            work_tree=dest,
            env={"GIT_INDEX_FILE": index},
            timeout=CHECKOUT_TIMEOUT_S,
        )
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(index)
    if done.timed_out or done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(
            f"cannot check out the judged tree {tree[:12]} into {dest}: "
            f"{why[-1] if why else 'timed out' if done.timed_out else done.returncode}"
        )


@contextlib.contextmanager
def pristine(git_dir: Path, tree: str, scratch: Path) -> Iterator[Path]:
    """``scratch/tree`` holding exactly ``tree`` for the ``with`` block, then removed."""
    dest = scratch / "tree"
    remove_tree(dest)
    write_tree(git_dir, tree, dest)
    try:
        yield dest
    finally:
        remove_tree(dest)
