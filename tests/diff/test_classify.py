"""Buckets: tests win over source; everything else is other; defaults from the contract."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from uh_core.diff.classify import (
    DEFAULT_SOURCE_GLOBS,
    DEFAULT_TEST_GLOBS,
    Classification,
    classify_patch_file,
    classify_patch_stream,
    classify_paths,
)
from uh_core.errors import DiffError, NotFoundError


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_x.py",
        "tests/data/input.json",
        "test/Foo.java",
        "pkg/test_mod.py",
        "test_top.py",
        "pkg/mod_test.py",
        "a/b/conftest.py",
        "conftest.py",
        "web/app.test.ts",
        "web/app.spec.js",
        "src/components/__tests__/Button.jsx",
        "src/test_in_src.py",  # tests win over source
    ],
)
def test_default_test_globs(path: str) -> None:
    assert classify_paths([path]).tests == [path]


@pytest.mark.parametrize("path", ["src/app.py", "src/pkg/deep/mod.rs"])
def test_default_source_globs(path: str) -> None:
    assert classify_paths([path]).source == [path]


@pytest.mark.parametrize(
    "path", ["README.md", "lib/app.py", "srcx/a.py", "contest.py", "testing.py"]
)
def test_everything_else_is_other(path: str) -> None:
    assert classify_paths([path]).other == [path]


def test_defaults_are_the_documented_ones() -> None:
    assert DEFAULT_TEST_GLOBS == (
        "tests/**",
        "test/**",
        "**/test_*.py",
        "**/*_test.py",
        "**/conftest.py",
        "**/*.test.*",
        "**/*.spec.*",
        "**/__tests__/**",
    )
    assert DEFAULT_SOURCE_GLOBS == ("src/**",)


def test_custom_globs_replace_the_defaults_and_empty_means_default() -> None:
    paths = ["lib/a.py", "spec/a_spec.rb", "src/b.py", "tests/t.py"]
    custom = classify_paths(paths, test_globs=["spec/**"], source_globs=["lib/**"])
    assert custom.to_json() == {
        "tests": ["spec/a_spec.rb"],
        "source": ["lib/a.py"],
        "other": ["src/b.py", "tests/t.py"],
    }
    assert classify_paths(paths, [], []) == classify_paths(paths)


def test_sorted_and_unique() -> None:
    result = classify_paths(["src/b.py", "src/a.py", "src/b.py", "z", "a"])
    assert result.source == ["src/a.py", "src/b.py"] and result.other == ["a", "z"]
    assert result.total == 4


def test_classify_patch_file_and_stream(tmp_path: Path) -> None:
    patch = (
        b"diff --git a/src/x.py b/src/x.py\n--- a/src/x.py\n+++ b/src/x.py\n@@ -1 +1 @@\n-a\n+b\n"
        b"diff --git a/tests/old.py b/tests/new.py\nsimilarity index 100%\n"
        b"rename from tests/old.py\nrename to tests/new.py\n"
    )
    path = tmp_path / "p.patch"
    path.write_bytes(patch)
    expected = Classification(
        tests=["tests/new.py", "tests/old.py"], source=["src/x.py"], other=[], files=2
    )
    assert classify_patch_file(path) == expected
    assert classify_patch_stream(io.BytesIO(patch)) == expected


def test_classify_patch_file_errors(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="no such patch file"):
        classify_patch_file(tmp_path / "missing.patch")
    (tmp_path / "text").write_text("just prose\n")
    with pytest.raises(DiffError, match="not a diff"):
        classify_patch_file(tmp_path / "text")
    with pytest.raises(DiffError, match="is a directory"):
        classify_patch_file(tmp_path)
    (tmp_path / "empty").write_bytes(b"")
    assert classify_patch_file(tmp_path / "empty") == Classification()
