"""The tamper check on real repositories: every kind of change is named; nothing done is nothing."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import git
from uh_core.errors import GitError
from uh_core.security import RepoSnapshot, TamperChange, compare, snapshot_repo

LOG = ".harness/audit/events.ndjson"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A repository with two commits, a tracked ``.harness/`` and an ignored event log."""
    top = tmp_path / "operator"
    top.mkdir()
    git(top, "init", "-q", "-b", "main")
    write(top, "README.md", "# operator\n")
    write(top, "src/app.py", "print('hello')\n")
    write(top, ".harness/.gitignore", "/audit/\n/missions/*/verification.yaml\n")
    write(top, ".harness/missions/x/mission.yaml", "id: x\n")
    write(top, LOG, '{"type":"a"}\n')
    git(top, "add", "-A")
    git(top, "commit", "-q", "-m", "one")
    write(top, "src/app.py", "print('hello, world')\n")
    git(top, "commit", "-q", "-am", "two")
    return top


def write(top: Path, rel: str, text: str, mode: int | None = None) -> Path:
    path = top / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)
    return path


def changes_after(
    top: Path, act: Callable[[], object], skip: Callable[[str], bool] | None = None
) -> list[TamperChange]:
    before = snapshot_repo(top, skip=skip)
    act()
    return compare(before, snapshot_repo(top, skip=skip))


def lines(changes: list[TamperChange]) -> list[str]:
    return [change.describe() for change in changes]


def rev(top: Path, what: str) -> str:
    return git(top, "rev-parse", what).strip()


def test_nothing_done_is_nothing_even_when_git_status_refreshes_the_index(root: Path) -> None:
    before = snapshot_repo(root)
    index = (root / ".git/index").read_bytes()
    os.utime(root / "README.md", (1_000_000_000, 1_000_000_000))  # stale stat data
    git(root, "status")  # refreshes and rewrites the index
    assert (root / ".git/index").read_bytes() != index
    assert compare(before, snapshot_repo(root)) == []


def test_taking_a_snapshot_does_not_rewrite_a_stale_index(root: Path) -> None:
    os.utime(root / "README.md", (1_000_000_000, 1_000_000_000))
    index = (root / ".git/index").read_bytes()
    snapshot_repo(root)
    assert (root / ".git/index").read_bytes() == index


def test_a_commit_on_main_is_the_ref_moving_once(root: Path) -> None:
    old = rev(root, "HEAD")
    changes = changes_after(root, lambda: git(root, "commit", "-q", "--allow-empty", "-m", "x"))
    new = rev(root, "HEAD")
    assert changes == [TamperChange("ref", "refs/heads/main", old, new)]
    assert lines(changes) == [f"ref refs/heads/main moved {old[:8]} → {new[:8]}"]


def test_head_switched_to_another_branch_or_detached(root: Path) -> None:
    changes = changes_after(root, lambda: git(root, "checkout", "-q", "-b", "other"))
    assert [(c.kind, c.name) for c in changes] == [("head", "HEAD"), ("ref", "refs/heads/other")]
    short = rev(root, "HEAD")[:8]
    assert changes[0].describe() == (
        f"head HEAD switched refs/heads/main ({short}) → refs/heads/other ({short})"
    )
    changes = changes_after(root, lambda: git(root, "checkout", "-q", "--detach"))
    assert lines(changes) == [f"head HEAD switched refs/heads/other ({short}) → detached ({short})"]


def test_head_moved_while_detached(root: Path) -> None:
    git(root, "checkout", "-q", "--detach")
    old = rev(root, "HEAD")
    changes = changes_after(root, lambda: git(root, "commit", "-q", "--allow-empty", "-m", "d"))
    assert lines(changes) == [f"head HEAD moved {old[:8]} → {rev(root, 'HEAD')[:8]}"]


def test_a_replace_ref_created(root: Path) -> None:
    def plant() -> None:
        git(root, "replace", rev(root, "HEAD~1"), rev(root, "HEAD"))

    changes = changes_after(root, plant)
    name = f"refs/replace/{rev(root, 'HEAD~1')}"
    assert lines(changes) == [f"ref {name} created at {rev(root, 'HEAD')[:8]}"]


def test_another_harness_branch_moved_or_deleted_packed_or_loose(root: Path) -> None:
    git(root, "branch", "harness/other", "HEAD~1")
    git(root, "branch", "harness/gone", "HEAD~1")
    git(root, "pack-refs", "--all")
    old = rev(root, "HEAD~1")

    def act() -> None:
        git(root, "update-ref", "refs/heads/harness/other", "HEAD")
        git(root, "branch", "-q", "-D", "harness/gone")

    assert lines(changes_after(root, act)) == [
        f"ref refs/heads/harness/gone deleted (was {old[:8]})",
        f"ref refs/heads/harness/other moved {old[:8]} → {rev(root, 'HEAD')[:8]}",
    ]


def test_hooks_created_made_executable_and_edited(root: Path) -> None:
    hooks = root / ".git/hooks"
    write(hooks, "pre-push", "#!/bin/sh\n", 0o644)
    write(hooks, "post-merge", "#!/bin/sh\ntrue\n", 0o755)

    def act() -> None:
        write(hooks, "post-commit", "#!/bin/sh\ncurl evil\n", 0o755)
        (hooks / "pre-push").chmod(0o755)
        write(hooks, "post-merge", "#!/bin/sh\ncurl evil\n")

    assert lines(changes_after(root, act)) == [
        "hook post-commit created",
        "hook post-merge changed",
        "hook pre-push mode 644 → 755",
    ]


def test_hooks_are_read_from_core_hooks_path(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "shared-hooks"
    outside.mkdir()
    git(root, "config", "core.hooksPath", str(outside))
    assert snapshot_repo(root).hooks_dir == outside
    changes = changes_after(root, lambda: write(outside, "pre-commit", "#!/bin/sh\n", 0o755))
    assert lines(changes) == ["hook pre-commit created"]


@pytest.mark.parametrize(
    ("key", "value"), [("core.fsmonitor", "./.helper"), ("alias.st", "!sh -c evil")]
)
def test_git_config_changed(root: Path, key: str, value: str) -> None:
    changes = changes_after(root, lambda: git(root, "config", key, value))
    assert lines(changes) == ["config .git/config changed"]


def test_git_files_planted(root: Path) -> None:
    def act() -> None:
        write(root, ".git/info/attributes", "* filter=evil\n")
        write(root, ".git/fsmonitor-helper", "#!/bin/sh\n", 0o755)
        (root / ".git/more-hooks").mkdir()

    assert lines(changes_after(root, act)) == [
        "git-file .git/fsmonitor-helper created",
        "git-file .git/info/attributes created",
        "git-file .git/more-hooks created (dir)",
    ]


def test_tracked_file_edited_and_untracked_file_planted(root: Path) -> None:
    def act() -> None:
        write(root, "src/app.py", "print('pwned')\n")
        write(root, "notes/plan.txt", "x\n")

    assert lines(changes_after(root, act)) == [
        "worktree notes/plan.txt created",
        "worktree src/app.py modified",
    ]


def test_tracked_file_deleted_untracked_file_removed_and_dirty_file_restored(root: Path) -> None:
    write(root, "scratch.txt", "operator's notes\n")
    write(root, "src/app.py", "operator's work in progress\n")

    def act() -> None:
        (root / "README.md").unlink()
        (root / "scratch.txt").unlink()
        git(root, "checkout", "-q", "--", "src/app.py")

    assert lines(changes_after(root, act)) == [
        "worktree README.md deleted",
        "worktree scratch.txt deleted",
        "worktree src/app.py now unmodified",
    ]


def test_a_broken_ref_is_named_not_dropped(root: Path) -> None:
    changes = changes_after(root, lambda: write(root, ".git/refs/heads/garbage", "not an id\n"))
    assert lines(changes) == ["ref refs/heads/garbage created at broken"]


def test_an_already_dirty_file_edited_again(root: Path) -> None:
    write(root, "src/app.py", "operator's work in progress\n")
    before = snapshot_repo(root)
    write(root, "src/app.py", "agent's overwrite\n")
    after = snapshot_repo(root)
    changes = compare(before, after)
    assert lines(changes) == ["worktree src/app.py modified"]
    record_b, record_a = (s.worktree["src/app.py"].split(" | ")[0] for s in (before, after))
    assert record_b == record_a  # git status says the same thing: only the content differs


def test_a_staged_change_is_an_index_change(root: Path) -> None:
    write(root, "src/app.py", "operator's work in progress\n")
    changes = changes_after(root, lambda: git(root, "add", "src/app.py"))
    assert [(c.kind, c.name) for c in changes] == [
        ("worktree", "src/app.py"),
        ("index", ".git/index"),
    ]
    assert changes[1].describe() == "index .git/index changed (what is staged)"


def test_files_hidden_from_status_are_still_compared(root: Path) -> None:
    changes = changes_after(
        root, lambda: git(root, "update-index", "--assume-unchanged", "README.md")
    )
    assert {c.kind for c in changes} == {"index", "worktree"}  # the flag itself is seen
    git(root, "update-index", "--skip-worktree", "src/app.py")
    changes = changes_after(root, lambda: write(root, "src/app.py", "hidden edit\n"))
    assert lines(changes) == ["worktree src/app.py modified"]


def test_harness_files_created_or_changed(root: Path) -> None:
    changes = changes_after(
        root, lambda: write(root, ".harness/missions/other/verification.yaml", "status: passed\n")
    )
    assert lines(changes) == ["harness-file .harness/missions/other/verification.yaml created"]
    changes = changes_after(root, lambda: write(root, ".harness/missions/x/mission.yaml", "y\n"))
    assert lines(changes) == ["harness-file .harness/missions/x/mission.yaml changed"]


def append(top: Path, rel: str, data: bytes) -> None:
    with (top / rel).open("ab") as handle:
        handle.write(data)


def test_an_event_log_appended_to_is_not_a_change(root: Path) -> None:
    before = snapshot_repo(root)
    append(root, LOG, b'{"type":"b"}\n')
    after = snapshot_repo(root)
    append(root, LOG, b'{"type":"c"}\n')  # still growing while compare reads it
    assert compare(before, after) == []


@pytest.mark.parametrize(
    ("new_text", "word"),
    [('{"type":"A"}\n{"type":"b"}\n', "rewritten (not an append)"), ("", "truncated")],
)
def test_an_event_log_rewritten_or_truncated_is_a_change(
    root: Path, new_text: str, word: str
) -> None:
    changes = changes_after(root, lambda: write(root, LOG, new_text))
    assert lines(changes) == [f"harness-file {LOG} {word}"]


def test_an_event_log_changed_again_after_the_after_snapshot_is_a_change(root: Path) -> None:
    before = snapshot_repo(root)
    append(root, LOG, b'{"type":"b"}\n')
    after = snapshot_repo(root)
    write(root, LOG, '{"type":"X"}\n{"type":"b"}\n')  # the append can no longer be proved
    assert lines(compare(before, after)) == [f"harness-file {LOG} rewritten (not an append)"]


def test_a_new_event_log_is_a_change(root: Path) -> None:
    changes = changes_after(root, lambda: write(root, ".harness/missions/y/events.ndjson", "{}\n"))
    assert lines(changes) == ["harness-file .harness/missions/y/events.ndjson created"]


def test_a_fifo_or_symlink_planted_under_harness_is_named_never_opened(root: Path) -> None:
    fifo = root / ".harness/missions/x/verification.yaml"
    result: list[RepoSnapshot] = []
    before = snapshot_repo(root)
    os.mkfifo(fifo)
    (root / ".harness/link").symlink_to("/etc/passwd")
    worker = threading.Thread(target=lambda: result.append(snapshot_repo(root)), daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "the snapshot hung on a FIFO"
    assert lines(compare(before, result[0])) == [
        "harness-file .harness/link created (symlink:/etc/passwd)",
        "harness-file .harness/missions/x/verification.yaml created (fifo)",
    ]


def test_skipped_paths_are_not_compared_and_skipped_folders_not_entered(root: Path) -> None:
    asked: list[str] = []

    def skip(rel: str) -> bool:
        asked.append(rel)
        return rel == ".harness/missions/x" or rel == ".harness/runs"

    write(root, ".harness/runs/r1/ledger.yaml", "a\n")

    def act() -> None:
        write(root, ".harness/missions/x/verification.yaml", "status: passed\n")
        write(root, ".harness/missions/x/mission.yaml", "changed\n")
        write(root, ".harness/runs/r1/ledger.yaml", "b\n")

    assert changes_after(root, act, skip=skip) == []
    assert not any(rel.startswith(".harness/runs/") for rel in asked)


def test_a_linked_worktree_root(root: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    git(root, "worktree", "add", "-q", "-b", "side", str(linked))
    snap = snapshot_repo(linked)
    assert snap.git_dir == root / ".git/worktrees/linked"
    assert snap.common_dir == root / ".git"
    assert snap.head.startswith("refs/heads/side ")
    assert compare(snap, snapshot_repo(linked)) == []

    def act() -> None:
        git(linked, "commit", "-q", "--allow-empty", "-m", "side")
        write(root, ".git/worktrees/linked/config.worktree", "[core]\n\tfsmonitor = x\n")
        git(linked, "checkout", "-q", "--detach")

    changes = changes_after(linked, act)
    assert [(c.kind, c.name) for c in changes] == [
        ("head", "HEAD"),
        ("ref", "refs/heads/side"),
        ("config", str(root / ".git/worktrees/linked/config.worktree")),
    ]


def test_inherited_git_variables_do_not_redirect_git(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    git(decoy, "init", "-q", "-b", "decoy")
    git(decoy, "commit", "-q", "--allow-empty", "-m", "decoy")
    monkeypatch.setenv("GIT_DIR", str(decoy / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "no-index"))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(tmp_path))
    snap = snapshot_repo(root)
    assert snap.git_dir == root / ".git"
    assert snap.hooks_dir == root / ".git/hooks"
    assert set(snap.refs) == {"refs/heads/main"}
    assert snap.worktree == {}


def test_not_a_repository_is_a_git_error(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="git rev-parse"):
        snapshot_repo(tmp_path)
