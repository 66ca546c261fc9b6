"""Property tests: touched paths equal what git itself reports, for random changes."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.diff.conftest import all_readings, init_repo, run_git
from uh_core.diff.capture import capture_diff
from uh_core.diff.patch_paths import scan_file, scan_lines, scan_stream
from uh_core.errors import DiffError

# Unicode, spaces, quotes, backslashes, tabs, a newline: everything git quotes or not.
NAME_ALPHABET = "abcXYZ019 _-.'\"\\\té日ü\n"
# UH_HYPOTHESIS_EXAMPLES=500 for a longer hunt; the suite keeps it small.
EXAMPLES = int(os.environ.get("UH_HYPOTHESIS_EXAMPLES", "25"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

segment = st.text(alphabet=NAME_ALPHABET, min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..", ".git") and not s.startswith(".git")
)
rel_path = st.lists(segment, min_size=1, max_size=3).map(tuple)
text_content = st.lists(
    st.sampled_from(
        ["alpha", "beta", "++ plus", "-- minus", "--- a/x", "+++ b/x", "@@ -1 +1 @@", ""]
    ),
    min_size=0,
    max_size=12,
).map(lambda lines: "".join(f"{line}\n" for line in lines).encode())
binary_content = st.binary(min_size=1, max_size=64).map(lambda data: b"\0" + data)
content = st.one_of(text_content, text_content, binary_content)
operation = st.sampled_from(["keep", "modify", "delete", "rename", "binary", "mode", "mode+modify"])


def _no_clashes(paths: list[tuple[str, ...]]) -> bool:
    """No path is also a directory of another, and no two paths are equal."""
    seen = set(paths)
    if len(seen) != len(paths):
        return False
    prefixes = {p[:i] for p in paths for i in range(1, len(p))}
    return not (seen & prefixes)


tree = st.lists(rel_path, min_size=1, max_size=6).filter(_no_clashes)


def _write(root: Path, path: tuple[str, ...], data: bytes) -> None:
    target = root.joinpath(*path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def _expected(root: Path) -> set[str]:
    return _expected_against(root, "HEAD")


def _expected_against(root: Path, base: str) -> set[str]:
    out = run_git(root, "diff", "--cached", "--name-status", "-z", "-M", base)
    fields = out.split(b"\0")
    names: set[str] = set()
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        count = 2 if status[:1] in (b"R", b"C") else 1
        for name in fields[i + 1 : i + 1 + count]:
            names.add(name.decode("utf-8", "backslashreplace"))
        i += 1 + count
    return names


def _make_changes(
    root: Path,
    files: list[tuple[str, ...]],
    contents: list[bytes],
    ops: list[str],
    new_files: list[tuple[tuple[str, ...], bytes]],
) -> None:
    """Commit ``files``, then change the working tree as ``ops`` and ``new_files`` say."""
    for path, data in zip(files, contents, strict=False):
        _write(root, path, data)
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "-m", "base", "--allow-empty")
    taken = set(files) | {p[:i] for p in files for i in range(1, len(p))}
    for index, (path, op) in enumerate(zip(files, ops, strict=False)):
        target = root.joinpath(*path)
        if op == "modify":
            target.write_bytes(target.read_bytes() + b"changed\n")
        elif op == "delete":
            target.unlink()
        elif op == "rename":
            new = (*path[:-1], path[-1] + f"~{index}")
            if new not in taken and all(new[:i] not in taken for i in range(1, len(new))):
                taken.add(new)
                target.rename(root.joinpath(*new))
        elif op == "binary":
            target.write_bytes(b"\0binary " + bytes([index]) * 40)
        elif op in ("mode", "mode+modify"):
            os.chmod(target, 0o755)
            if op == "mode+modify":
                target.write_bytes(target.read_bytes() + b"more\n")
    for path, data in new_files:
        if path in taken or any(path[:i] in taken for i in range(1, len(path))):
            continue
        if any(p[: len(path)] == path for p in taken):
            continue
        taken.add(path)
        _write(root, path, data)


changes = {
    "files": tree,
    "contents": st.lists(content, min_size=6, max_size=6),
    "ops": st.lists(operation, min_size=6, max_size=6),
    "new_files": st.lists(st.tuples(rel_path, content), max_size=3),
}


@SETTINGS
@given(**changes)
def test_touched_paths_match_git_name_status(
    files: list[tuple[str, ...]],
    contents: list[bytes],
    ops: list[str],
    new_files: list[tuple[tuple[str, ...], bytes]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = init_repo(Path(tmp) / "repo")
        _make_changes(root, files, contents, ops, new_files)
        run_git(root, "add", "-A")
        expected = _expected(root)
        for quote_path in ("true", "false"):
            for binary in ((), ("--binary",)):
                patch = run_git(
                    root, "-c", f"core.quotePath={quote_path}", "diff", "--cached", "-M",
                    *binary, "HEAD",
                )  # fmt: skip
                for reading in all_readings(patch, Path(tmp)):
                    assert len(reading) == len(set(reading))
                    assert set(reading) == expected, (quote_path, binary, patch[:2000])


@settings(
    max_examples=max(EXAMPLES // 3, 5), deadline=None, suppress_health_check=list(HealthCheck)
)
@given(**changes)
def test_captured_patch_applies_back_to_the_same_tree(
    files: list[tuple[str, ...]],
    contents: list[bytes],
    ops: list[str],
    new_files: list[tuple[tuple[str, ...], bytes]],
) -> None:
    # git apply cannot read back a section without hunks (an empty file, a mode change)
    # whose path has a directory ending in a space: "diff --git a/x /0 b/x /0". A limit of
    # git's format, documented in docs/diff.md; the reader itself handles such names.
    every = [*files, *(path for path, _ in new_files)]
    assume(not any(part.endswith(" ") for path in every for part in path[:-1]))
    with tempfile.TemporaryDirectory() as tmp:
        root = init_repo(Path(tmp) / "repo")
        _make_changes(root, files, contents, ops, new_files)
        (root / ".harness/missions/m").mkdir(parents=True)
        index_before = (root / ".git/index").read_bytes()
        out = root / ".harness/missions/m/diff.patch"
        result = capture_diff(root, out)
        assert (root / ".git/index").read_bytes() == index_before
        # What git add -A stages (minus .harness/), as a tree id...
        run_git(root, "add", "-A", "--", ".", ":(exclude).harness")
        expected = run_git(root, "write-tree")
        # ...equals the tree of a checkout of the base with the patch applied.
        check = Path(tmp) / "check"
        run_git(root, "worktree", "add", "-q", "--detach", str(check), result.base_commit)
        if out.stat().st_size:
            run_git(check, "apply", str(out))
        run_git(check, "add", "-A")
        assert run_git(check, "write-tree") == expected
        assert set(scan_file(out).paths) == _expected_against(root, result.base_commit)


# -- robustness: any input gives paths or a DiffError, never a crash -------------------------

HEADERISH = [
    b"diff --git a/x b/x",
    b"diff --git a/x b/y",
    b'diff --git "a/\\303\\251" "b/\\303\\251"',
    b"diff --cc x",
    b"diff -ruN a b",
    b"--- a/x",
    b"+++ b/x",
    b"--- /dev/null",
    b"+++ /dev/null",
    b"@@ -1 +1 @@",
    b"@@ -1,2 +1,3 @@ ctx",
    b"@@@ -1 -1 +1 @@@",
    b"rename from x",
    b"rename to y",
    b"copy from x",
    b"new file mode 100644",
    b"old mode 100644",
    b"index 123..456 100644",
    b"Binary files a/x and b/x differ",
    b"GIT binary patch",
    b"literal 5",
    b"zcmV?d00001",
    b"\\ No newline at end of file",
    b" context",
    b"-removed",
    b"+added",
    b"",
    b"commit 0123456789abcdef",
    b"Only in a: b",
    b'--- "a/unterminated',
    b"diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\n c",
    b"diff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -1 +1 @@",
    b"--- a/p\n+++ b/p\n@@ -1 +1 @@\n-1\n+2",
]


@settings(max_examples=EXAMPLES * 8, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(HEADERISH), st.binary(max_size=12)), max_size=30))
def test_any_line_soup_gives_paths_or_a_diff_error(lines: list[bytes]) -> None:
    patch = b"\n".join(lines)
    outcomes: set[str] = set()
    readers = [lambda: scan_lines(io.BytesIO(patch), source="<stdin>")]
    readers += [
        lambda size=size: scan_stream(io.BytesIO(patch), chunk_bytes=size)
        for size in (1 << 20, 64, 13, 5)
    ]
    for read in readers:
        try:
            outcomes.add(repr(read().paths))
        except DiffError as exc:  # the same error, naming the same line, however it is read
            assert str(exc).count("\n") == 0
            outcomes.add(str(exc))
    assert len(outcomes) == 1, outcomes
