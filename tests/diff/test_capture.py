"""``uh-core diff capture``: real repositories, real git, real ``uh-core`` subprocesses."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import Repo, git
from tests.diff.conftest import init_repo, run_git
from uh_core.diff.capture import capture_diff, capture_mission_diff
from uh_core.diff.patch_paths import scan_file
from uh_core.errors import GitError, NotFoundError
from uh_core.layout import Layout

MISSION = "id: m1\ntitle: capture test\n"


def _tree_of_worktree(root: Path, *exclude: str) -> str:
    """Tree id of the working tree as `git add -A` would stage it (a throwaway index)."""
    index = root.parent / f"{root.name}.test-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    specs = [":(top)", *(f":(top,exclude){path}" for path in exclude)]
    subprocess.run(["git", "read-tree", "HEAD"], cwd=root, env=env, check=True)
    subprocess.run(["git", "add", "-A", "--", *specs], cwd=root, env=env, check=True)
    tree = subprocess.run(
        ["git", "write-tree"], cwd=root, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    index.unlink()
    return tree


def _apply_on(repo_root: Path, base: str, patch: Path, where: Path) -> str:
    git(repo_root, "worktree", "add", "-q", "--detach", str(where), base)
    subprocess.run(["git", "apply", "--whitespace=nowarn", str(patch)], cwd=where, check=True)
    return _tree_of_worktree(where)


def _index_digest(root: Path) -> str:
    return hashlib.sha256((root / ".git" / "index").read_bytes()).hexdigest()


def _messy_worktree(repo: Repo) -> None:
    """Every kind of change capture must see."""
    repo.write(".gitignore", "*.log\n")
    repo.write("src/keep.py", "x = 1\n")
    repo.write("src/gone.py", "y = 2\n")
    repo.write("docs/renamed.md", "".join(f"line {i}\n" for i in range(30)))
    (repo.root / "tool.sh").write_text("echo hi\n")
    (repo.root / "data.bin").write_bytes(bytes(range(256)) * 4)
    repo.commit("more")
    repo.write("src/keep.py", "x = 2\n")  # modified, unstaged
    repo.write("src/staged.py", "staged = True\n")
    git(repo.root, "add", "src/staged.py")  # new, staged
    (repo.root / "src/gone.py").unlink()  # deleted
    os.rename(repo.root / "docs/renamed.md", repo.root / "docs/moved here.md")  # renamed
    os.chmod(repo.root / "tool.sh", 0o755)  # mode only
    (repo.root / "data.bin").write_bytes(bytes(range(255, -1, -1)) * 4)  # binary
    repo.write("tests/test_new é.py", "def test(): pass\n")  # untracked, unicode and space
    repo.write("debug.log", "ignored\n")  # ignored: never captured
    repo.write(".harness/missions/m1/notes.txt", "harness state\n")  # never captured


def test_capture_patch_applies_back_onto_the_base(repo: Repo, tmp_path: Path) -> None:
    repo.mission("m1", MISSION)
    _messy_worktree(repo)
    before = _index_digest(repo.root)
    result = repo.uh("diff", "capture", "m1")
    assert result.code == 0, result.stderr
    patch = repo.root / ".harness/missions/m1/diff.patch"
    assert result.stdout.startswith("wrote .harness/missions/m1/diff.patch (")
    assert _index_digest(repo.root) == before  # the user's index is untouched
    paths = scan_file(patch).paths
    assert "debug.log" not in paths
    assert not [p for p in paths if p.startswith(".harness/")]
    assert sorted(paths) == sorted(
        [
            "data.bin",
            "docs/moved here.md",
            "docs/renamed.md",
            "src/gone.py",
            "src/keep.py",
            "src/staged.py",
            "tests/test_new é.py",
            "tool.sh",
        ]
    )
    assert b"GIT binary patch" in patch.read_bytes()
    applied = _apply_on(repo.root, "HEAD", patch, tmp_path / "check")
    assert applied == _tree_of_worktree(repo.root, ".harness")


def test_capture_against_an_older_base(repo: Repo, tmp_path: Path) -> None:
    repo.mission("m1", MISSION)
    repo.commit("mission")
    base = git(repo.root, "rev-parse", "HEAD").strip()
    repo.write("src/a.py", "committed\n")
    repo.commit("a")
    repo.write("src/b.py", "uncommitted\n")
    result = repo.uh("diff", "capture", "m1", "--base", "HEAD~1", "--json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["base_commit"] == base and data["base"] == "HEAD~1"
    assert data["files"] == 2 and data["path"] == ".harness/missions/m1/diff.patch"
    patch = repo.root / data["path"]
    assert data["bytes"] == patch.stat().st_size
    assert sorted(scan_file(patch).paths) == ["src/a.py", "src/b.py"]
    applied = _apply_on(repo.root, base, patch, tmp_path / "check")
    assert applied == _tree_of_worktree(repo.root, ".harness")


def test_capture_emits_an_event(repo: Repo) -> None:
    repo.mission("m1", MISSION)
    repo.write("src/x.py", "x\n")
    out, result = capture_mission_diff(Layout(repo.root), "m1")
    events = (repo.root / ".harness/missions/m1/events.ndjson").read_text().splitlines()
    event = json.loads(events[-1])
    assert event["event"] == "diff.captured" and event["mission_id"] == "m1"
    assert event["path"] == ".harness/missions/m1/diff.patch"
    assert event["files"] == 1 == result.files and event["bytes"] == out.stat().st_size
    assert event["base"] == result.base_commit == git(repo.root, "rev-parse", "HEAD").strip()


def test_capture_sees_a_same_size_edit_with_its_mtime_put_back(repo: Repo) -> None:
    """The racy-git case: git's stat check alone would call this file unchanged."""
    repo.mission("m1", MISSION)
    git(repo.root, "config", "core.trustctime", "false")  # a common setting; mtime is all
    target = repo.write("src/same.py", "value = 'aaaa'\n")
    repo.commit("same")
    time.sleep(1.1)
    git(repo.root, "status", "--porcelain")  # refreshes the index after the file's second
    stat = target.stat()
    target.write_text("value = 'bbbb'\n")
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert git(repo.root, "diff", "--name-only") == ""  # stat data alone: no change seen
    git(repo.root, "update-index", "--assume-unchanged", "README.md")
    repo.write("README.md", "# changed behind an assume-unchanged bit\n")
    out, _ = capture_mission_diff(Layout(repo.root), "m1")
    assert sorted(scan_file(out).paths) == ["README.md", "src/same.py"]


def test_capture_of_a_clean_tree_is_empty(repo: Repo) -> None:
    repo.mission("m1", MISSION)
    repo.commit("mission")
    result = repo.uh("diff", "capture", "m1")
    assert result.code == 0, result.stderr
    assert (repo.root / ".harness/missions/m1/diff.patch").read_bytes() == b""
    assert "(0 file(s), 0 bytes)" in result.stdout


def test_capture_replaces_the_previous_patch_whole(repo: Repo) -> None:
    repo.mission("m1", MISSION)
    repo.write("src/a.py", "a\n")
    layout = Layout(repo.root)
    first, _ = capture_mission_diff(layout, "m1")
    (repo.root / "src/a.py").unlink()
    repo.write("src/b.py", "b\n")
    second, _ = capture_mission_diff(layout, "m1")
    assert first == second and scan_file(second).paths == ["src/b.py"]
    assert not list(second.parent.glob(".diff.patch.*"))  # no temporary file left behind


def test_capture_on_an_unborn_branch(tmp_path: Path) -> None:
    root = init_repo(tmp_path / "fresh")
    (root / "a.txt").write_text("a\n")
    (root / ".harness/missions/m1").mkdir(parents=True)
    out = root / ".harness/missions/m1/diff.patch"
    result = capture_diff(root, out)
    empty_tree = run_git(root, "hash-object", "-t", "tree", "/dev/null").decode().strip()
    assert result.base_commit == empty_tree
    assert scan_file(out).paths == ["a.txt"] and result.files == 1


def test_capture_from_a_root_below_the_git_top_level(tmp_path: Path) -> None:
    top = init_repo(tmp_path / "mono")
    (top / "README").write_text("top\n")
    root = top / "service"
    (root / ".harness/missions/m1").mkdir(parents=True)
    (root / ".harness/missions/m1/mission.yaml").write_text(MISSION)
    run_git(top, "add", "-A")
    run_git(top, "commit", "-q", "-m", "base")
    (root / "app.py").write_text("app\n")
    (top / "README").write_text("changed\n")
    (root / ".harness/missions/m1/extra").write_text("state\n")
    out, _ = capture_mission_diff(Layout(root), "m1")
    assert sorted(scan_file(out).paths) == ["README", "service/app.py"]


def test_capture_errors(repo: Repo, tmp_path: Path) -> None:
    missing = repo.uh("diff", "capture", "nope")
    assert missing.code == 2 and missing.stdout == ""
    assert missing.stderr.count("\n") == 1 and "mission 'nope' not found" in missing.stderr
    bad_id = repo.uh("diff", "capture", "../etc")
    assert bad_id.code == 2 and "invalid mission id" in bad_id.stderr
    repo.mission("m1", MISSION)
    bad_base = repo.uh("diff", "capture", "m1", "--base", "no-such-rev")
    assert bad_base.code == 2 and "--base 'no-such-rev': not a commit" in bad_base.stderr
    assert "Traceback" not in bad_base.stderr
    option_base = repo.uh("diff", "capture", "m1", "--base=--help")
    assert option_base.code == 2 and "not a revision" in option_base.stderr
    plain = tmp_path / "plain"
    (plain / ".harness/missions/m1").mkdir(parents=True)
    (plain / ".harness/missions/m1/mission.yaml").write_text(MISSION)
    with pytest.raises(GitError, match="is not inside a git repository"):
        capture_mission_diff(Layout(plain), "m1")
    with pytest.raises(NotFoundError):
        capture_mission_diff(Layout(repo.root), "m2")
