"""The fast reader against a straightforward one: every line exact, every hunk counted.

On a well-formed patch the two must find the same paths and sections, however the input is
cut into buffers: names with spaces, quoted UTF-8 names, renames and copies, mode changes,
both binary forms, content lines that read like headers, CRLF, no newline at the end.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.diff.conftest import all_readings
from tests.diff.patchgen import random_patch, reference_read
from uh_core.diff import reader
from uh_core.diff.patch_paths import scan_file, scan_stream
from uh_core.errors import DiffError

EXAMPLES = int(os.environ.get("UH_HYPOTHESIS_EXAMPLES", "25"))


def _variant(patch: bytes, form: str) -> bytes:
    if form == "crlf":
        return patch.replace(b"\n", b"\r\n")
    if form == "no final newline":
        return patch[:-1]
    return patch


@settings(
    max_examples=EXAMPLES * 4,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    sections=st.integers(1, 25),
    form=st.sampled_from(["lf", "crlf", "no final newline"]),
)
def test_random_patches_read_as_the_reference_does(
    tmp_path: Path, seed: int, sections: int, form: str
) -> None:
    patch, touched = random_patch(seed, sections)
    patch = _variant(patch, form)
    expected = reference_read(patch)
    assert not isinstance(expected, str), expected
    assert expected[0] == touched  # (the reference reads what the generator wrote)
    for reading in all_readings(patch, tmp_path):
        assert reading == expected[0]
    for size in (1 << 20, 61, 7):
        summary = scan_stream(io.BytesIO(patch), chunk_bytes=size)
        assert (summary.paths, summary.files) == expected


@pytest.mark.parametrize("size", [1 << 20, 65_536, 4_099, 1_021])
def test_many_sections_cut_across_buffers(tmp_path: Path, size: int) -> None:
    # Thousands of sections: every kind of line lands on a buffer boundary somewhere.
    patch, touched = random_patch(7, 3000)
    expected = reference_read(patch)
    assert not isinstance(expected, str) and expected[0] == touched
    summary = scan_stream(io.BytesIO(patch), chunk_bytes=size)
    assert (summary.paths, summary.files) == expected
    path = tmp_path / "big.patch"
    path.write_bytes(patch)
    assert scan_file(path, chunk_bytes=size).paths == expected[0]


def _read_all_ways(patch: bytes, tmp_path: Path) -> list[str]:
    readings = all_readings(patch, tmp_path)
    for other in readings[1:]:
        assert other == readings[0]
    return readings[0]


def test_header_triple_inside_a_fast_hunk_is_content(tmp_path: Path) -> None:
    # "--- a/x", "+++ b/x", then the next "@@ -": content of a counted hunk, not a file.
    for name in (b"a/src/x.py", b'"a/caf\\303\\251"'):
        other = b"b" + name[1:] if name[:1] == b"a" else b'"b' + name[2:]
        patch = (
            b"diff --git " + name + b" " + other + b"\nindex 1..2 100644\n"
            b"--- " + name + b"\n+++ " + other + b"\n"
            b"@@ -1 +1 @@\n--- a/x\n+++ b/x\n@@ -5 +5 @@\n-a\n+b\n"
        )
        assert reference_read(patch) == (_read_all_ways(patch, tmp_path), 1)


def test_diff_lines_as_content_and_binary_bodies(tmp_path: Path) -> None:
    patch = (
        b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n diff --git a/y b/y\n"
        b"-diff --git a/z b/z\n+Binary files a/w and b/w differ\n"
        b"diff --git a/bin b/bin\nindex 1..2 100644\nGIT binary patch\nliteral 5\nzcmV\n\n"
        b"delta 3\r\nHc\n\n"
        b"diff --git a/next b/next\nnew file mode 100644\nindex 0..e69de29\n"
    )
    assert _read_all_ways(patch, tmp_path) == ["x", "bin", "next"]
    assert reference_read(patch) == (["x", "bin", "next"], 3)


def test_binary_data_followed_by_text_goes_the_exact_way(tmp_path: Path) -> None:
    # The binary data ends at a line with a space: not a "diff " line, so no common shape.
    patch = (
        b"diff --git a/bin b/bin\nGIT binary patch\nliteral 1\nzc\n\nsome text\n"
        b"--- a/p\n+++ b/p\n@@ -1 +1 @@\n-1\n+2\n"
    )
    assert _read_all_ways(patch, tmp_path) == ["bin", "p"] == reference_read(patch)[0]


def test_a_plain_binary_line_after_git_hunks_names_its_file(tmp_path: Path) -> None:
    patch = (
        b"diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n"
        b"Binary files a/img.png and b/img.png differ\n"
    )
    assert _read_all_ways(patch, tmp_path) == ["f", "img.png"]


def test_a_hunk_header_after_a_re_read_stretch_is_text_however_cut(tmp_path: Path) -> None:
    # The stretch re-read for the "Binary files" line ends outside any file: the "@@@"
    # after it is text. (Read with a common header before it in the same buffer, the
    # previous reader marked the file as still open and took "@@@" for a hunk header.)
    patch = (
        b"diff --git a/g b/g\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n"
        b"diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n"
        b"+b\n c\nrename to d/y\nBinary files a/x and b/x differ\n@@@ -1 -1 +1 @@@\n"
    )
    assert _read_all_ways(patch, tmp_path) == ["g", "f", "x"]


def test_custom_prefixes_read_the_same_whatever_the_buffer(tmp_path: Path) -> None:
    # A rename teaches the prefixes a/d/ and b/d/; "diff --git a/d/f b/d/f" then names f
    # (the previous reader named it d/f when it met that header while skipping hunks).
    patch = (
        b"diff --git a/d/old b/d/new\nsimilarity index 90%\nrename from old\nrename to new\n"
        b"--- a/d/old\n+++ b/d/new\n@@ -1 +1 @@\n-a\n+b\n"
        b"diff --git a/d/f b/d/f\nindex 1..2 100644\n--- a/d/f\n+++ b/d/f\n@@ -1 +1 @@\n-a\n+b\n"
    )
    assert _read_all_ways(patch, tmp_path) == ["old", "new", "f"]
    assert reference_read(patch) == (["old", "new", "f"], 2)


def test_quoted_names_decode_and_odd_fields_go_the_exact_way(tmp_path: Path) -> None:
    patch = (
        b'diff --git "a/q\\"x\\tz" "b/q\\"x\\tz"\nold mode 100644\nnew mode 100755\n'
        b'diff --git "a/./dot" "b/./dot"\nnew file mode 100644\nindex 0..e69de29\n'
        b"diff --git a/m b/m\n--- /dev/null\n+++ /dev/null\n@@ -1 +1 @@\n-a\n+b\n"
        b'diff --git a/n b/n\n--- a/n\t2024\n+++ "b/n"\n@@ -1 +1 @@\n-a\n+b\n'
    )
    assert _read_all_ways(patch, tmp_path) == ['q"x\tz', "dot", "n"]
    assert reference_read(patch) == (['q"x\tz', "dot", "n"], 4)


def test_a_truncated_last_hunk_is_reported_however_cut(tmp_path: Path) -> None:
    patch = b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n"
    saved = reader.CARRY_LIMIT
    try:
        for limit in (saved, 0):
            reader.CARRY_LIMIT = limit
            for size in (1 << 20, 13, 5):
                with pytest.raises(DiffError, match=r"<stdin>:6: input ends inside hunk"):
                    scan_stream(io.BytesIO(patch), chunk_bytes=size)
    finally:
        reader.CARRY_LIMIT = saved
