"""A tiny project in a real git repository, sandboxes an "agent" wrote into, and a picture of
the main checkout precise enough to prove that a refused promotion changed nothing."""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import CliResult, Repo, git
from uh_core.layout import Layout
from uh_core.models.sandbox import SandboxEntry
from uh_core.sandbox.worktree import create_sandbox

PY = sys.executable
GOOD = "def add(a, b):\n    return a + b\n"
BAD = "def add(a, b):\n    return a - b\n"
MISSION = f"""\
id: calc
title: Implement add
acceptance_criteria:
  - id: adds
    description: add(2, 3) is 5
    check_command: {PY} -c "from src.calc import add; assert add(2, 3) == 5"
"""


@dataclass(frozen=True)
class Picture:
    """The main checkout as git and a user see it: nothing may differ after a refusal."""

    head: str
    refs: str
    index: str
    status: str
    files: dict[str, str]


@dataclass
class Project:
    repo: Repo

    @property
    def root(self) -> Path:
        return self.repo.root

    @property
    def layout(self) -> Layout:
        return Layout(self.root)

    def sandbox(self, files: dict[str, str | None], runtime: str = "fix") -> SandboxEntry:
        """A sandbox from HEAD where an "agent" wrote ``files`` (None deletes the file)."""
        entry = create_sandbox(self.layout, "calc", runtime)
        worktree = self.root / entry.worktree
        for rel, text in files.items():
            path = worktree / rel
            if text is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
        return entry

    def verify(self, sandbox: SandboxEntry) -> CliResult:
        return self.repo.uh("verify", "calc", "--sandbox", sandbox.id)

    def promote(self, *args: str) -> CliResult:
        return self.repo.uh("promote", "calc", *args)

    def promote_json(self, *args: str) -> dict[str, Any]:
        result = self.promote(*args, "--json")
        assert result.code == 0, result.stderr
        data: dict[str, Any] = json.loads(result.stdout)
        return data

    def record(self, mission_id: str = "calc") -> dict[str, Any]:
        path = self.root / f".harness/missions/{mission_id}/promotion.yaml"
        data: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
        return data

    def events(self, path: str) -> list[dict[str, Any]]:
        file = self.root / path
        if not file.exists():
            return []
        return [json.loads(line) for line in file.read_text().splitlines() if line.strip()]

    def promotion_events(self, log: str = ".harness/missions/calc/events.ndjson") -> list[str]:
        return [e["event"] for e in self.events(log) if e["event"].startswith("promotion.")]

    def picture(self) -> Picture:
        files: dict[str, str] = {}
        for path in sorted(self.root.rglob("*")):
            rel = path.relative_to(self.root).as_posix()
            if path.is_file() and not rel.startswith((".git/", ".harness/")):
                files[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
        return Picture(
            head=git(self.root, "rev-parse", "HEAD").strip(),
            refs=git(self.root, "for-each-ref", "--format=%(refname) %(objectname)"),
            index=git(self.root, "ls-files", "-s"),
            status=git(self.root, "status", "--porcelain", "--untracked-files=all"),
            files=files,
        )

    def show(self, rev: str, path: str) -> str:
        return git(self.root, "show", f"{rev}:{path}")

    def changed(self, rev: str = "HEAD") -> list[str]:
        return git(self.root, "diff", "--name-only", f"{rev}~1", rev).split()


@pytest.fixture
def project(repo: Repo) -> Project:
    repo.write(".gitignore", "__pycache__/\n")
    repo.write("src/__init__.py", "")
    repo.write("src/calc.py", "def add(a, b):\n    raise NotImplementedError\n")
    repo.write("docs/notes.md", "notes\n")
    repo.mission("calc", MISSION)
    repo.commit("project")
    return Project(repo)
