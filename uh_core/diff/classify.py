"""Bucket touched paths into tests / source / other (the TDD gate's view of a diff)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from uh_core.diff.globs import compile_globs
from uh_core.diff.patch_paths import scan_file, scan_stream

DEFAULT_TEST_GLOBS: tuple[str, ...] = (
    "tests/**",
    "test/**",
    "**/test_*.py",
    "**/*_test.py",
    "**/conftest.py",
    "**/*.test.*",
    "**/*.spec.*",
    "**/__tests__/**",
)
DEFAULT_SOURCE_GLOBS: tuple[str, ...] = ("src/**",)


@dataclass
class Classification:
    """Touched paths by bucket; each list sorted, repository-relative, decoded."""

    tests: list[str] = field(default_factory=list)
    source: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    files: int = 0  # file sections in the patch (a rename is one section, two paths)

    @property
    def total(self) -> int:
        return len(self.tests) + len(self.source) + len(self.other)

    def to_json(self) -> dict[str, list[str]]:
        return {"tests": list(self.tests), "source": list(self.source), "other": list(self.other)}


def _never(_: str) -> None:
    return None


def _globs(given: Sequence[str] | None, default: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(given) if given else default


def classify_paths(
    paths: Iterable[str],
    test_globs: Sequence[str] | None = None,
    source_globs: Sequence[str] | None = None,
) -> Classification:
    """Tests are paths matching a test glob (they win), source those matching a source glob.

    ``None`` or an empty sequence means the defaults. Duplicates are dropped.
    """
    test = compile_globs(_globs(test_globs, DEFAULT_TEST_GLOBS))
    source = compile_globs(_globs(source_globs, DEFAULT_SOURCE_GLOBS))
    result = Classification()
    buckets = (result.tests, result.source, result.other)
    # Bound methods, looked up once: this loop runs once per touched path.
    test_full = test.full.fullmatch if test.full else _never
    test_base = test.basename.fullmatch if test.basename else _never
    source_full = source.full.fullmatch if source.full else _never
    source_base = source.basename.fullmatch if source.basename else _never
    for path in dict.fromkeys(paths):  # unique, in order: a git diff comes sorted already
        base = path[path.rfind("/") + 1 :]
        if test_full(path) or test_base(base):
            buckets[0].append(path)
        elif source_full(path) or source_base(base):
            buckets[1].append(path)
        else:
            buckets[2].append(path)
    for bucket in buckets:
        bucket.sort()
    return result


def classify_patch_file(
    path: Path,
    test_globs: Sequence[str] | None = None,
    source_globs: Sequence[str] | None = None,
) -> Classification:
    """Classify the paths a patch file touches, reading it as a stream.

    Raises NotFoundError for a missing file and DiffError for a file that is not a diff
    (an empty file is an empty classification).
    """
    summary = scan_file(path)
    result = classify_paths(summary.paths, test_globs, source_globs)
    result.files = summary.files
    return result


def classify_patch_stream(
    stream: BinaryIO,
    test_globs: Sequence[str] | None = None,
    source_globs: Sequence[str] | None = None,
    *,
    source: str = "<stdin>",
) -> Classification:
    """Like :func:`classify_patch_file`, for a binary stream such as stdin."""
    summary = scan_stream(stream, source=source)
    result = classify_paths(summary.paths, test_globs, source_globs)
    result.files = summary.files
    return result
