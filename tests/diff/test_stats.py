"""hunk_stats: lines added/removed per file, via unidiff, for the dashboard."""

from __future__ import annotations

import pytest

from uh_core.diff.stats import FileStat, hunk_stats
from uh_core.errors import DiffError


def test_hunk_stats_per_file() -> None:
    patch = (
        "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n"
        "@@ -1,2 +1,3 @@\n-x\n+y\n+z\n keep\n"
        "diff --git a/old.txt b/new.txt\nsimilarity index 90%\nrename from old.txt\n"
        "rename to new.txt\n--- a/old.txt\n+++ b/new.txt\n@@ -1 +1 @@\n-o\n+n\n"
        "diff --git a/gone b/gone\ndeleted file mode 100644\n--- a/gone\n+++ /dev/null\n"
        "@@ -1 +0,0 @@\n-g\n"
        'diff --git "a/caf\\303\\251" "b/caf\\303\\251"\n--- "a/caf\\303\\251"\n'
        '+++ "b/caf\\303\\251"\n@@ -1 +1 @@\n-1\n+2\n'
        "diff --git a/img b/img\nindex 1..2 100644\nBinary files a/img and b/img differ\n"
    )
    assert hunk_stats(patch.encode()) == [
        FileStat("src/a.py", added=2, removed=1),
        FileStat("new.txt", added=1, removed=1, old_path="old.txt"),
        FileStat("gone", added=0, removed=1),
        FileStat("caf\u00e9", added=1, removed=1),
        FileStat("img", added=0, removed=0, binary=True),
    ]


def test_hunk_stats_refuses_broken_hunks() -> None:
    with pytest.raises(DiffError, match="cannot read the patch"):
        hunk_stats("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n-a\n")
