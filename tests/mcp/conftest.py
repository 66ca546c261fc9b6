"""A demo workspace and the SDK's own client on ``uh-core mcp`` over stdio or HTTP.

Every wait is a handshake with a generous deadline (the machine may be two busy cores):
the client's own session start, the line the HTTP server prints once it accepts, an event
in the log; never a sleep standing for one.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from uh_core.demo.build import build_demo

if TYPE_CHECKING:  # the SDK is imported where it is used: 0.9 s in every xdist worker
    from mcp import Client  # that collects these tests, most of which never run one
    from mcp.client.stdio import StdioServerParameters

TIMEOUT_S = 240.0  # one request, on a loaded machine
TOKEN_LINE = "uh-core mcp: every request needs the bearer token in "


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return build_demo(tmp_path / "demo").layout.root


def stdio_params(root: Path) -> StdioServerParameters:
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "uh_core", "mcp", "--root", str(root)],
        env=dict(os.environ),  # UH_STATE_DIR: this test's sandboxes
        cwd=str(root),
    )


def stdio(root: Path) -> Client:
    from mcp import Client

    return Client(stdio_params(root), read_timeout_seconds=TIMEOUT_S)


@dataclass
class Served:
    url: str
    token_file: Path

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@contextlib.contextmanager
def http_server(root: Path, log: Path, *extra: str, host: str = "127.0.0.1") -> Iterator[Served]:
    """``uh-core mcp --http HOST:0``: where it serves and its token file, once it says it
    accepts; stopped after."""
    argv = [sys.executable, "-m", "uh_core", "mcp", "--root", str(root), "--http", f"{host}:0"]
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [*argv, *extra], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err
        )
    try:
        deadline = time.monotonic() + TIMEOUT_S
        url = token = None
        while url is None:
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith("uh-core mcp: serving "):
                    url = line.removeprefix("uh-core mcp: serving ").strip()
                if line.startswith(TOKEN_LINE):
                    token = Path(line.removeprefix(TOKEN_LINE).strip())
            assert proc.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, "the server never said where it serves"
            if url is None:
                time.sleep(0.05)
        assert token is not None, log.read_text(errors="replace")
        yield Served(url, token)
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(60)


@contextlib.asynccontextmanager
async def connect(transport: str, root: Path) -> AsyncIterator[Client]:
    """The SDK's client on ``uh-core mcp --root ROOT`` over ``stdio`` or ``http``."""
    if transport == "stdio":
        async with stdio(root) as client:
            yield client
        return
    from mcp import Client

    with http_server(root, root.parent / "server.log") as served:
        url = served.url
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")  # loopback
        async with Client(authorized(served), read_timeout_seconds=TIMEOUT_S) as client:
            yield client


def authorized(served: Served) -> Any:
    """The SDK's streamable HTTP transport, every request carrying the server's token (as a
    client configured with the header does: docs/mcp.md)."""
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    http = create_mcp_http_client(headers=served.headers())
    return streamable_http_client(served.url, http_client=http)


TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])


async def until(
    check: Callable[[], Awaitable[Any]], what: str, deadline_s: float = TIMEOUT_S
) -> Any:
    """Ask ``check`` until it returns something true (a handshake with a long deadline)."""
    import anyio

    with anyio.fail_after(deadline_s):
        while True:
            value = await check()
            if value:
                return value
            await anyio.sleep(0.1)
    raise AssertionError(what)  # pragma: no cover


async def events_of(client: Client, mission_id: str) -> list[dict[str, Any]]:
    result = await client.call_tool("tail_events", {"mission_id": mission_id})
    assert not result.is_error, result.content
    assert result.structured_content is not None
    found: list[dict[str, Any]] = result.structured_content["events"]
    return found
