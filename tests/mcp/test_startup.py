"""``mcp`` is imported only by ``uh-core mcp``: help and every other command start without
it; ``--http`` is checked before anything is served."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from uh_core.cli.mcp_cmd import parse_http
from uh_core.errors import UsageError

PROBE = """
import sys
from uh_core.cli.main import run
try:
    run(sys.argv[1:])
except SystemExit:
    pass
print(sorted(name for name in sys.modules if name == "mcp" or name.startswith(("mcp.", "uvicorn", "starlette"))))
"""


@pytest.mark.parametrize("argv", [["--help"], ["mcp", "--help"], ["schema", "mission"]])
def test_help_does_not_import_the_sdk(argv: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_http_address() -> None:
    assert parse_http("8765") == ("127.0.0.1", 8765)
    assert parse_http(":0") == ("127.0.0.1", 0)
    assert parse_http("127.0.0.1:9000") == ("127.0.0.1", 9000)
    assert parse_http("[::1]:9000") == ("::1", 9000)
    for bad in ("127.0.0.1:x", "127.0.0.1:70000", "example.com:80"):
        with pytest.raises(UsageError):
            parse_http(bad)


def test_mcp_needs_a_harness(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "uh_core", "mcp", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert result.stderr.startswith("uh-core: error: no .harness/ in")


def test_a_port_in_use_is_one_line(demo: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "uh_core",
                "mcp",
                "--root",
                str(demo),
                "--http",
                f"127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    assert result.returncode == 2
    assert result.stderr.startswith(f"uh-core: error: --http 127.0.0.1:{port}: ")
    assert len(result.stderr.splitlines()) == 1
