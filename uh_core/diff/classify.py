"""Bucket touched paths into tests / source / other (the TDD gate's view of a diff)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO

from uh_core.diff.globs import GlobSet, compile_globs
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


def _globs(given: Sequence[str] | None, default: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(given) if given else default


def _either(globs: GlobSet) -> str:
    """Regex source matching a whole path when ``globs`` does (``**/NAME`` on the part after
    the last ``/``: NAME matches no ``/``, so that first try decides)."""
    parts = [f"(?:{globs.full.pattern})"] if globs.full else []
    if globs.basename:
        parts.append(f"(?>.*/)?(?:{globs.basename.pattern})")
    return "|".join(parts) or "(?!)"


@lru_cache(maxsize=64)
def _bucketer(test: GlobSet, source: GlobSet) -> re.Pattern[str]:
    """Group 1 takes a test path, group 2 a source path (tests win); other paths: no match."""
    return re.compile(f"({_either(test)})|({_either(source)})", re.DOTALL)


def classify_paths(
    paths: Iterable[str],
    test_globs: Sequence[str] | None = None,
    source_globs: Sequence[str] | None = None,
) -> Classification:
    """Tests are paths matching a test glob (they win), source those matching a source glob.

    ``None`` or an empty sequence means the defaults. Duplicates are dropped.
    """
    # unique, in order: a git diff comes sorted already
    return _classify(dict.fromkeys(paths), test_globs, source_globs)


def _classify(
    unique: Iterable[str], test_globs: Sequence[str] | None, source_globs: Sequence[str] | None
) -> Classification:
    """:func:`classify_paths` of paths known to be unique."""
    test = compile_globs(_globs(test_globs, DEFAULT_TEST_GLOBS))
    source = compile_globs(_globs(source_globs, DEFAULT_SOURCE_GLOBS))
    result = Classification()
    tests, source_paths, other = result.tests, result.source, result.other
    bucket = _bucketer(test, source).fullmatch  # one call per path: this loop runs 100,000s
    for path in unique:
        match = bucket(path)
        if match is None:
            other.append(path)
        elif match.lastindex == 1:
            tests.append(path)
        else:
            source_paths.append(path)
    tests.sort()
    source_paths.sort()
    other.sort()
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
    result = _classify(summary.paths, test_globs, source_globs)  # (each path once)
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
    result = _classify(summary.paths, test_globs, source_globs)
    result.files = summary.files
    return result
