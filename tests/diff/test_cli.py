"""``uh-core diff classify`` through the real console entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PATCH = (
    b"diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n+++ b/src/app.py\n"
    b"@@ -1 +1 @@\n-a\n+b\n"
    b"diff --git a/tests/test_app.py b/tests/test_app.py\nnew file mode 100644\n"
    b"--- /dev/null\n+++ b/tests/test_app.py\n@@ -0,0 +1 @@\n+t\n"
    b'diff --git "a/docs/caf\\303\\251\\tmenu.md" "b/docs/caf\\303\\251\\tmenu.md"\n'
    b"old mode 100644\nnew mode 100755\n"
)


def uh(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uh_core", *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def test_classify_json(tmp_path: Path) -> None:
    path = tmp_path / "p.patch"
    path.write_bytes(PATCH)
    result = uh("diff", "classify", str(path), "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "tests": ["tests/test_app.py"],
        "source": ["src/app.py"],
        "other": ["docs/caf\u00e9\tmenu.md"],
    }


def test_classify_text_from_stdin_with_custom_globs() -> None:
    result = uh(
        "diff", "classify", "-", "--test-path", "docs/**", "--source-path", "{src,tests}/**",
        stdin=PATCH,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "tests (1):\n"
        '  "docs/caf\u00e9\\tmenu.md"\n'
        "source (2):\n"
        "  src/app.py\n"
        "  tests/test_app.py\n"
        "other (0):\n"
        "3 path(s) in 3 file section(s)\n"
    )


def test_classify_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    missing = uh("diff", "classify", str(tmp_path / "none.patch"))
    assert missing.returncode == 2 and missing.stdout == ""
    assert missing.stderr == f"uh-core: error: {tmp_path / 'none.patch'}: no such patch file\n"
    prose = tmp_path / "prose.txt"
    prose.write_text("Dear diary,\n")
    bad = uh("diff", "classify", str(prose), "--json")
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith(f"uh-core: error: {prose}: not a diff")
    assert bad.stderr.count("\n") == 1
    truncated = uh("diff", "classify", "-", stdin=b"--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n")
    assert truncated.returncode == 2
    assert truncated.stderr.startswith("uh-core: error: <stdin>:4: input ends inside hunk")


def test_classify_empty_input_is_empty() -> None:
    result = uh("diff", "classify", "-", "--json", stdin=b"")
    assert result.returncode == 0 and json.loads(result.stdout) == {
        "tests": [],
        "source": [],
        "other": [],
    }


def test_diff_needs_an_action() -> None:
    result = uh("diff")
    assert result.returncode == 2 and "ACTION" in result.stderr
