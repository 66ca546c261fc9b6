"""``uh-core init``: layout, idempotence, and a .gitignore that keeps the tree clean."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import Repo, git
from uh_core.events.reader import read_events


def test_init_creates_the_layout(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    repo = Repo(root)
    result = repo.uh("init")
    assert result.code == 0, result.stderr
    for rel in ("project.yaml", "adapters", "missions", "sandboxes/index.yaml", ".gitignore"):
        assert (root / ".harness" / rel).exists(), rel
    project = yaml.safe_load((root / ".harness/project.yaml").read_text())
    assert project["schema_version"] == "uh.project.v0" and project["id"] == "fresh"
    index = yaml.safe_load((root / ".harness/sandboxes/index.yaml").read_text())
    assert index == {"schema_version": "uh.sandboxes-index.v0", "sandboxes": []}
    events, _ = read_events(root / ".harness/audit/events.ndjson")
    assert [e.event for e in events] == ["project.initialized"]


def test_init_is_idempotent_and_keeps_user_edits(repo: Repo) -> None:
    project = repo.root / ".harness/project.yaml"
    project.write_text(project.read_text() + "# my note\n")
    ignore = repo.root / ".harness/.gitignore"
    ignore.write_text("/my-own-thing/\n")
    first = repo.uh("init", "--json")
    assert first.code == 0
    assert "# my note" in project.read_text()
    text = ignore.read_text()
    assert text.startswith("/my-own-thing/\n") and "/missions/*/events.ndjson" in text
    second = repo.uh("init")
    assert second.code == 0 and second.stdout.startswith("already initialized")
    assert ignore.read_text() == text


def test_generated_state_is_ignored_but_missions_are_not(repo: Repo) -> None:
    repo.mission("m", "id: m\n")
    for rel in ("events.ndjson", "verification.yaml", "diff.patch", "runs/r/x.log"):
        repo.write(f".harness/missions/m/{rel}", "x\n")
    for rel in ("audit/events.ndjson", "runs/r.json", "prompts/p.md", "sandboxes/s/worktree/f"):
        repo.write(f".harness/{rel}", "x\n")
    status = git(repo.root, "status", "--porcelain", "--untracked-files=all")
    assert status.strip() == "?? .harness/missions/m/mission.yaml"
