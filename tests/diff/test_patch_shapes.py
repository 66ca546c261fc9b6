"""One test per diff shape the touched-path reader must handle, on real tool output."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.diff.conftest import run_git
from uh_core.diff.patch_paths import scan_lines, touched_paths
from uh_core.errors import DiffError

Read = Callable[[bytes], list[str]]


def commit_all(root: Path, message: str = "c") -> None:
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", message, "--allow-empty")


def staged(root: Path, *flags: str) -> bytes:
    run_git(root, "add", "-A")
    return run_git(root, "diff", "--cached", *flags, "HEAD")


def plain_diff(*args: str, cwd: Path) -> bytes:
    result = subprocess.run(["diff", *args], cwd=cwd, capture_output=True)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


# -- git shapes ------------------------------------------------------------------------------


def test_git_modification(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "src").mkdir()
    (git_repo / "src/app.py").write_text("a\n")
    commit_all(git_repo)
    (git_repo / "src/app.py").write_text("a\nb\n")
    assert paths_of(staged(git_repo)) == ["src/app.py"]


def test_git_addition_and_deletion_use_dev_null(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "old.txt").write_text("old\n")
    commit_all(git_repo)
    (git_repo / "old.txt").unlink()
    (git_repo / "new.txt").write_text("new\n")
    patch = staged(git_repo)
    assert b"--- /dev/null" in patch and b"+++ /dev/null" in patch
    assert sorted(paths_of(patch)) == ["new.txt", "old.txt"]


def test_git_empty_files_added_and_deleted_have_no_hunks(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "gone").write_text("")
    commit_all(git_repo)
    (git_repo / "gone").unlink()
    (git_repo / "empty dir name").mkdir()
    (git_repo / "empty dir name/new empty").write_text("")
    patch = staged(git_repo)
    assert b"@@" not in patch
    assert sorted(paths_of(patch)) == ["empty dir name/new empty", "gone"]


def test_git_rename_touches_both_paths(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "src").mkdir()
    (git_repo / "src/calc.py").write_text("".join(f"line {i}\n" for i in range(20)))
    commit_all(git_repo)
    (git_repo / "lib").mkdir()
    os.rename(git_repo / "src/calc.py", git_repo / "lib/calc core.py")
    patch = staged(git_repo, "-M")
    assert b"rename from src/calc.py" in patch
    assert paths_of(patch) == ["src/calc.py", "lib/calc core.py"]


def test_git_rename_with_changes(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "a.txt").write_text("".join(f"line {i}\n" for i in range(20)))
    commit_all(git_repo)
    os.rename(git_repo / "a.txt", git_repo / "b.txt")
    with open(git_repo / "b.txt", "a") as handle:
        handle.write("one more\n")
    patch = staged(git_repo, "-M")
    assert b"similarity index" in patch and b"@@" in patch
    assert paths_of(patch) == ["a.txt", "b.txt"]


def test_git_copy_touches_both_paths(git_repo: Path, paths_of: Read) -> None:
    body = "".join(f"line {i}\n" for i in range(20))
    (git_repo / "orig.txt").write_text(body)
    commit_all(git_repo)
    (git_repo / "copy.txt").write_text(body)
    with open(git_repo / "orig.txt", "a") as handle:
        handle.write("changed\n")
    patch = staged(git_repo, "-C", "-C")
    assert b"copy from orig.txt" in patch
    assert sorted(paths_of(patch)) == ["copy.txt", "orig.txt"]


def test_git_mode_only_change(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "run me.sh").write_text("echo hi\n")
    commit_all(git_repo)
    os.chmod(git_repo / "run me.sh", 0o755)
    patch = staged(git_repo)
    assert b"old mode 100644" in patch and b"---" not in patch
    assert paths_of(patch) == ["run me.sh"]


def test_git_binary_without_binary_flag(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "img.png").write_bytes(b"\0\1\2")
    commit_all(git_repo)
    (git_repo / "img.png").write_bytes(b"\0\1\3")
    (git_repo / "new.bin").write_bytes(b"\0new")
    patch = staged(git_repo)
    assert b"Binary files a/img.png and b/img.png differ" in patch
    assert b"Binary files /dev/null and b/new.bin differ" in patch
    assert sorted(paths_of(patch)) == ["img.png", "new.bin"]


def test_git_binary_patch(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "img.png").write_bytes(bytes(range(256)) * 8)
    commit_all(git_repo)
    (git_repo / "img.png").write_bytes(bytes(range(255, -1, -1)) * 8)
    (git_repo / "after.txt").write_text("text after binary\n")
    patch = staged(git_repo, "--binary")
    assert b"GIT binary patch" in patch
    assert sorted(paths_of(patch)) == ["after.txt", "img.png"]


def test_git_names_with_spaces_have_trailing_tab(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "dir a b").mkdir()
    (git_repo / "dir a b/file b c.txt").write_text("x\n")
    commit_all(git_repo)
    (git_repo / "dir a b/file b c.txt").write_text("y\n")
    patch = staged(git_repo)
    assert b"--- a/dir a b/file b c.txt\t\n" in patch
    assert paths_of(patch) == ["dir a b/file b c.txt"]


@pytest.mark.parametrize("quote_path", ["true", "false"])
def test_git_c_quoted_names_decode_as_utf8(git_repo: Path, paths_of: Read, quote_path: str) -> None:
    names = ["caf\u00e9.txt", 'quote"d', "back\\slash", "tab\there", "new\nline", "日本"]
    for name in names:
        (git_repo / name).write_text("1\n")
    commit_all(git_repo)
    for name in names:
        (git_repo / name).write_text("2\n")
    run_git(git_repo, "add", "-A")
    patch = run_git(git_repo, "-c", f"core.quotePath={quote_path}", "diff", "--cached", "HEAD")
    if quote_path == "true":
        assert b'"a/caf\\303\\251.txt"' in patch
    assert b'"a/tab\\there"' in patch
    assert sorted(paths_of(patch)) == sorted(names)


def test_git_no_prefix(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "a").mkdir()
    (git_repo / "a/x.py").write_text("1\n")
    (git_repo / "mode").write_text("1\n")
    commit_all(git_repo)
    (git_repo / "a/x.py").write_text("2\n")
    os.chmod(git_repo / "mode", 0o755)
    run_git(git_repo, "add", "-A")
    patch = run_git(git_repo, "diff", "--cached", "--no-prefix", "HEAD")
    assert b"diff --git a/x.py a/x.py" in patch
    assert sorted(paths_of(patch)) == ["a/x.py", "mode"]


def test_git_custom_prefixes(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "x.py").write_text("1\n")
    (git_repo / "m").write_text("1\n")
    commit_all(git_repo)
    (git_repo / "x.py").write_text("2\n")
    os.chmod(git_repo / "m", 0o755)
    run_git(git_repo, "add", "-A")
    patch = run_git(
        git_repo, "diff", "--cached", "--src-prefix=left/side/", "--dst-prefix=right/", "HEAD"
    )
    assert b"diff --git left/side/m right/m" in patch
    assert sorted(paths_of(patch)) == ["m", "x.py"]


def test_git_same_custom_prefix_learned_from_a_rename(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "r.txt").write_text("".join(f"{i}\n" for i in range(20)))
    (git_repo / "m").write_text("1\n")
    commit_all(git_repo)
    os.rename(git_repo / "r.txt", git_repo / "s.txt")
    os.chmod(git_repo / "m", 0o755)
    run_git(git_repo, "add", "-A")
    patch = run_git(
        git_repo, "diff", "--cached", "-M", "--src-prefix=p/", "--dst-prefix=p/", "HEAD"
    )
    assert sorted(paths_of(patch)) == ["m", "r.txt", "s.txt"]


def test_crlf_patch(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "w.txt").write_text("a\n")
    (git_repo / "sp ace.txt").write_text("a\n")
    commit_all(git_repo)
    (git_repo / "w.txt").write_text("b\n")
    (git_repo / "sp ace.txt").write_text("b\n")
    (git_repo / "caf\u00e9").write_text("c\n")
    patch = staged(git_repo).replace(b"\n", b"\r\n")
    assert sorted(paths_of(patch)) == ["caf\u00e9", "sp ace.txt", "w.txt"]


def test_format_patch_series(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "base").write_text("0\n")
    commit_all(git_repo, "base")
    (git_repo / "one.py").write_text("1\n")
    commit_all(git_repo, "first\n\n--- not a header\n+++ neither\n")
    (git_repo / "two.py").write_text("2\n")
    (git_repo / "base").write_text("changed\n")
    commit_all(git_repo, "second")
    patch = run_git(git_repo, "format-patch", "--stdout", "HEAD~2")
    assert patch.startswith(b"From ")
    assert sorted(paths_of(patch)) == ["base", "one.py", "two.py"]


def test_git_log_p(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "a").write_text("0\n")
    commit_all(git_repo, "base")
    (git_repo / "a").write_text("1\n")
    commit_all(git_repo, "touch a\n\ndiff --git x y in the message\n")
    (git_repo / "b c").write_text("2\n")
    commit_all(git_repo, "add b c")
    run_git(git_repo, "commit", "-q", "--allow-empty", "-m", "empty")
    patch = run_git(git_repo, "log", "-p", "HEAD~3..HEAD")
    assert patch.startswith(b"commit ")
    assert sorted(paths_of(patch)) == ["a", "b c"]


def test_log_of_an_empty_commit_is_no_paths(git_repo: Path, paths_of: Read) -> None:
    run_git(git_repo, "commit", "-q", "--allow-empty", "-m", "nothing")
    assert paths_of(run_git(git_repo, "log", "-p", "-1")) == []


def test_combined_diff_of_a_merge(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "f").write_text("base\n")
    commit_all(git_repo)
    run_git(git_repo, "checkout", "-q", "-b", "side")
    (git_repo / "f").write_text("side\n")
    commit_all(git_repo, "side")
    run_git(git_repo, "checkout", "-q", "main")
    (git_repo / "f").write_text("main\n")
    commit_all(git_repo, "main")
    subprocess.run(["git", "merge", "-q", "side"], cwd=git_repo, capture_output=True)
    (git_repo / "f").write_text("merged\n")
    commit_all(git_repo, "merge")
    patch = run_git(git_repo, "log", "-1", "-p", "--cc")
    assert b"diff --cc f" in patch
    assert paths_of(patch) == ["f"]


def test_hunk_content_that_looks_like_headers(git_repo: Path, paths_of: Read) -> None:
    """Lines "-- a/fake"/"++ b/fake" become "--- a/fake"/"+++ b/fake" in a hunk: content."""
    body = ["keep"] * 10
    (git_repo / "notes.md").write_text("\n".join([*body, "-- a/fake", *body, "-- tail"]) + "\n")
    commit_all(git_repo)
    (git_repo / "notes.md").write_text("\n".join([*body, "++ b/fake", *body, "++ tail"]) + "\n")
    (git_repo / "zz.md").write_text("x\n")
    run_git(git_repo, "add", "-A")
    patch = run_git(git_repo, "diff", "--cached", "-U0", "HEAD")
    assert b"\n--- a/fake\n+++ b/fake\n@@ -" in patch  # a header triple, made of content
    assert b"\n--- tail\n+++ tail\n" in patch
    assert paths_of(patch) == ["notes.md", "zz.md"]


def test_content_header_triple_inside_a_git_hunk() -> None:
    patch = (
        b"diff --git a/doc.txt b/doc.txt\n"
        b"index 1111111..2222222 100644\n"
        b"--- a/doc.txt\n"
        b"+++ b/doc.txt\n"
        b"@@ -1 +1 @@\n"
        b"--- a/evil\n"
        b"+++ b/evil\n"
        b"@@ -5 +5 @@\n"
        b"-x\n"
        b"+y\n"
    )
    assert touched_paths(patch.splitlines()) == ["doc.txt"]


def test_plain_section_after_git_hunks_is_read() -> None:
    patch = (
        b"diff --git a/one b/one\n"
        b"--- a/one\n"
        b"+++ b/one\n"
        b"@@ -1 +1 @@\n"
        b"-a\n"
        b"+b\n"
        b"--- a/two\n"
        b"+++ b/two\n"
        b"@@ -1 +1 @@\n"
        b"-c\n"
        b"+d\n"
    )
    assert touched_paths(patch.splitlines()) == ["one", "two"]


def test_no_newline_markers(git_repo: Path, paths_of: Read) -> None:
    (git_repo / "n").write_bytes(b"no newline")
    commit_all(git_repo)
    (git_repo / "n").write_bytes(b"still none")
    (git_repo / "m").write_bytes(b"x")
    patch = staged(git_repo)
    assert b"\\ No newline at end of file" in patch
    assert sorted(paths_of(patch)) == ["m", "n"]


# -- plain diff ------------------------------------------------------------------------------


def test_plain_diff_u_of_two_files(tmp_path: Path, paths_of: Read) -> None:
    (tmp_path / "f.c.orig").write_text("a\n")
    (tmp_path / "f.c").write_text("b\n")
    patch = plain_diff("-u", "f.c.orig", "f.c", cwd=tmp_path)
    assert patch.startswith(b"--- f.c.orig\t")
    assert paths_of(patch) == ["f.c"]


def test_plain_diff_ruN_of_trees(tmp_path: Path, paths_of: Read) -> None:
    for side, files in (("old", {"a.txt": "1\n", "gone.txt": "g\n"}), ("new", {"a.txt": "2\n"})):
        (tmp_path / side / "sub dir").mkdir(parents=True)
        for name, body in files.items():
            (tmp_path / side / "sub dir" / name).write_text(body)
    (tmp_path / "new/sub dir/added.txt").write_text("+\n")
    (tmp_path / "old/bin").write_bytes(b"\0a")
    (tmp_path / "new/bin").write_bytes(b"\0b")
    patch = plain_diff("-ruN", "old", "new", cwd=tmp_path)
    assert b"Binary files old/bin and new/bin differ" in patch
    assert sorted(paths_of(patch)) == [
        "bin",
        "sub dir/a.txt",
        "sub dir/added.txt",
        "sub dir/gone.txt",
    ]


def test_plain_diff_with_dev_null_and_ab_prefixes(paths_of: Read) -> None:
    patch = (
        b"--- /dev/null\n"
        b"+++ b/created.py\n"
        b"@@ -0,0 +1 @@\n"
        b"+x\n"
        b"--- a/removed.py\n"
        b"+++ /dev/null\n"
        b"@@ -1 +0,0 @@\n"
        b"-y\n"
    )
    assert paths_of(patch) == ["created.py", "removed.py"]


def test_plain_hunks_are_counted(paths_of: Read) -> None:
    """In a plain diff only the counts say whether "--- x"/"+++ y" are content or a header."""
    head = b"--- a/f\n+++ b/f\n"
    tail = b"--- x\n+++ y\n@@ -1 +1 @@\n-p\n+q\n"
    assert paths_of(head + b"@@ -1 +1 @@\n" + tail) == ["f"]  # the hunk takes both lines
    assert paths_of(head + b"@@ -1 +1 @@\n-a\n+b\n" + tail) == ["f", "y"]  # a new file
    with pytest.raises(DiffError, match="ends early"):
        paths_of(head + b"@@ -1,2 +1,2 @@\n" + tail)  # "@@" comes before the hunk is complete


def test_svn_style_index_lines(paths_of: Read) -> None:
    patch = (
        b"Index: trunk/x.c\n"
        b"===================================================================\n"
        b"--- trunk/x.c\t(revision 1)\n"
        b"+++ trunk/x.c\t(working copy)\n"
        b"@@ -1 +1 @@\n"
        b"-a\n"
        b"+b\n"
    )
    assert paths_of(patch) == ["trunk/x.c"]


# -- input that is not (quite) a diff ---------------------------------------------------------


def test_empty_input_is_no_paths(paths_of: Read) -> None:
    assert paths_of(b"") == []
    assert paths_of(b"\n\n") == []


def test_not_a_diff_is_a_clear_error() -> None:
    with pytest.raises(DiffError, match=r"not a diff.*first text line: 'hello world'"):
        touched_paths([b"hello world\n", b"second line\n"])


def test_truncated_hunk_names_the_line() -> None:
    patch = b"--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n"
    with pytest.raises(DiffError, match=r"<patch>:5: input ends inside hunk '@@ -1,3 \+1,3 @@'"):
        touched_paths(patch.splitlines())


def test_malformed_hunk_header_names_the_line(tmp_path: Path) -> None:
    from uh_core.diff.patch_paths import scan_file

    path = tmp_path / "bad.patch"
    path.write_bytes(b"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -x +y @@\n")
    with pytest.raises(DiffError, match=rf"{path}:4: malformed hunk header"):
        scan_file(path)


def test_dangling_minus_line_in_git_header() -> None:
    with pytest.raises(DiffError, match="'--- ' line not followed by a '\\+\\+\\+ ' line"):
        touched_paths([b"diff --git a/f b/f", b"--- a/f", b"index 1..2"])


def test_bad_quoted_name() -> None:
    with pytest.raises(DiffError, match="bad quoted name"):
        touched_paths(
            [b"diff --git a/f b/f", b'--- "a/f', b"+++ b/f", b"@@ -1 +1 @@", b"-a", b"+b"]
        )


def test_files_counts_sections_not_paths() -> None:
    patch = (
        b"diff --git a/x b/y\nsimilarity index 100%\nrename from x\nrename to y\n"
        b"diff --git a/z b/z\nold mode 100644\nnew mode 100755\n"
    )
    summary = scan_lines(patch.splitlines())
    assert summary.paths == ["x", "y", "z"] and summary.files == 2
