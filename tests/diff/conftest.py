"""Fixtures for the diff tests: bare git repositories (no .harness/) and patch readers."""

from __future__ import annotations

import io
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import GIT_ENV
from uh_core.diff import reader
from uh_core.diff.patch_paths import scan_file, scan_lines, scan_stream

# Buffer sizes that cut lines, hunks and headers at every kind of place.
CHUNK_SIZES = (1 << 20, 4096, 97, 7)


def run_git(root: Path, *args: str, input: bytes | None = None) -> bytes:
    result = subprocess.run(
        ["git", "-c", "core.safecrlf=false", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        input=input,
        capture_output=True,
        check=True,
    )
    return result.stdout


def init_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    run_git(root, "init", "-q", "-b", "main")
    run_git(root, "config", "core.autocrlf", "false")
    return root


def all_readings(patch: bytes, tmp: Path | None = None) -> list[list[str]]:
    """Touched paths as read every way the API offers (lines, stream, file; chunk sizes)."""
    seen = [scan_lines(patch.splitlines(keepends=True)).paths]
    seen.append(scan_lines(patch.splitlines()).paths)
    for size in CHUNK_SIZES:
        seen.append(scan_stream(io.BytesIO(patch), chunk_bytes=size).paths)
    saved = reader.CARRY_LIMIT
    reader.CARRY_LIMIT = 0  # never carry a hunk over: count the last one of each buffer
    try:
        for size in (97, 7):
            seen.append(scan_stream(io.BytesIO(patch), chunk_bytes=size).paths)
    finally:
        reader.CARRY_LIMIT = saved
    if tmp is not None:
        path = tmp / "reading.patch"
        path.write_bytes(patch)
        seen.append(scan_file(path).paths)
        seen.append(scan_file(path, chunk_bytes=61).paths)
    return seen


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "work")


@pytest.fixture
def paths_of(tmp_path: Path) -> Callable[[bytes], list[str]]:
    """Read a patch every way; assert all readings agree; return the paths."""

    def read(patch: bytes) -> list[str]:
        readings = all_readings(patch, tmp_path)
        for other in readings[1:]:
            assert other == readings[0]
        return readings[0]

    return read
