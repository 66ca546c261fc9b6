"""Files uh writes get the mode the umask gives (0644 under 022, 0600 under 077), however
they are written: replaced whole through a temporary file, appended to, or streamed."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from uh_core.events.writer import EventLog
from uh_core.fileio import current_umask, write_text_atomic, write_yaml
from uh_core.models.events import ProjectInitialized
from uh_core.proc import run_logged


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_writer_honours_the_umask(tmp_path: Path, umask: int) -> None:
    assert current_umask() == umask
    expected = 0o666 & ~umask
    write_text_atomic(tmp_path / "a.txt", "x\n")
    write_yaml(tmp_path / "b.yaml", {"a": 1})
    EventLog(tmp_path / "events.ndjson").emit(ProjectInitialized())
    done = run_logged(
        "echo out; echo err >&2",
        cwd=tmp_path,
        stdout_log=tmp_path / "out.log",
        stderr_log=tmp_path / "err.log",
    )
    assert done.exit_code == 0
    for name in ("a.txt", "b.yaml", "events.ndjson", "out.log", "err.log"):
        assert _mode(tmp_path / name) == expected, name


def test_a_replaced_file_takes_the_umask_not_its_old_mode(tmp_path: Path) -> None:
    path = tmp_path / "doc.yaml"
    path.write_text("old\n")
    path.chmod(0o600)
    old = os.umask(0o022)
    try:
        write_text_atomic(path, "new\n")
    finally:
        os.umask(old)
    assert _mode(path) == 0o644 and path.read_text() == "new\n"
