"""Diff paths where the TypeScript uh and uh disagreed, settled on git's own reading."""

from __future__ import annotations

import subprocess
from pathlib import Path

from uh_core.diff.patch_paths import touched_paths

NEW_Q = b'diff --git "a/x\\qy" "b/x\\qy"\nnew file mode 100644\n--- /dev/null\n+++ "b/x\\qy"\n'
NEW_Q += b"@@ -0,0 +1 @@\n+x\n"


def paths(patch: bytes) -> list[str]:
    return touched_paths(patch.splitlines(keepends=True))


def test_an_escape_git_never_writes_keeps_the_path(tmp_path: Path) -> None:
    assert paths(NEW_Q) == ["x\\qy"]
    plain = b'--- "a/x\\qy"\n+++ "b/x\\qy"\n@@ -1 +1 @@\n-y\n+x\n'
    assert paths(plain) == ["x\\qy"]
    # git keeps it too (reading the field unquoted), where uh used to refuse the patch
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "p.patch").write_bytes(NEW_Q)
    numstat = subprocess.run(
        ["git", "apply", "--numstat", "p.patch"], cwd=tmp_path, capture_output=True, check=True
    )
    assert b"x\\\\qy" in numstat.stdout


def test_both_sides_dev_null_name_no_file() -> None:
    body = b"--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+x\n"
    assert paths(body) == []
    assert paths(b"diff --git a/x b/x\n" + body) == []
    assert paths(b"diff --git a/x b/x\n" + body + NEW_Q) == ["x\\qy"]
