"""Hostile agents against the harness: the project, scripted agents, and a picture of the
operator's repository that must come out byte-identical (or the run must say tampered)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tests.conftest import git
from tests.harness.conftest import Project, project, project_template  # noqa: F401 - re-exported
from uh_core.isolation import bwrap_available

MODES = ("bwrap", "none")

# Where an agent finds the operator's repository from inside its sandbox: the sandbox
# borrows its objects (alternates), so the path is one file away.
FIND_OPERATOR = """
alt = pathlib.Path(".git/objects/info/alternates").read_text().strip()
OPERATOR = pathlib.Path(alt).parent.parent
def attempt(action):
    try:
        action()
        print("attack: done")
    except Exception as exc:  # read-only under isolation
        print(f"attack: refused: {exc}")
"""


@pytest.fixture(params=MODES)
def isolation(request: pytest.FixtureRequest) -> str:
    mode: str = request.param
    if mode == "bwrap":
        ok, reason = bwrap_available()
        if not ok:
            pytest.skip(f"bubblewrap cannot run here: {reason}")
    return mode


def picture(root: Path) -> dict[str, str]:
    """HEAD, every ref, hooks, config and git-dir files, status, tracked contents."""
    found = {
        "HEAD": (root / ".git/HEAD").read_text(),
        "refs": "".join(  # the run's own harness/calc aside
            line + "\n"
            for line in git(root, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
            if not line.startswith("refs/heads/harness/calc ")
        ),
        "status": git(root, "status", "--porcelain", "--untracked-files=all"),
        "config": (root / ".git/config").read_text(),
    }
    for path in sorted((root / ".git/hooks").glob("*")) if (root / ".git/hooks").is_dir() else []:
        found[f"hook {path.name}"] = hashlib.sha256(path.read_bytes()).hexdigest()
    found["git-dir"] = " ".join(sorted(os.listdir(root / ".git")))
    for rel in git(root, "ls-files", "-z").split("\0"):
        if rel:
            found[rel] = hashlib.sha256((root / rel).read_bytes()).hexdigest()
    harness = root / ".harness/missions"
    for path in sorted(harness.rglob("verification.yaml")):
        found[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def alive_with(marker: str) -> list[int]:
    """Processes whose command line holds ``marker``."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                pids.append(int(entry))
    return pids
