"""The same server over streamable HTTP on loopback: tools, progress, errors, resources."""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import Client

from tests.mcp.conftest import TIMEOUT_S, http_server
from tests.mcp.test_resources import watch_a_change
from tests.mcp.test_tools import TOOLS


def test_over_http(demo: Path, tmp_path: Path) -> None:
    with http_server(demo, tmp_path / "server.log") as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

        async def scenario() -> None:
            async with Client(url, read_timeout_seconds=TIMEOUT_S) as client:
                assert {t.name for t in (await client.list_tools()).tools} == TOOLS
                listing = await client.call_tool("list_missions", {})
                assert not listing.is_error and listing.structured_content is not None
                assert len(listing.structured_content["missions"]) == 4

                progress: list[float] = []

                async def on_progress(
                    done: float, total: float | None, message: str | None
                ) -> None:
                    progress.append(done)

                result = await client.call_tool(
                    "verify_mission", {"mission_id": "divide"}, progress_callback=on_progress
                )
                assert not result.is_error, result.content
                assert result.structured_content["status"] == "failed"  # type: ignore[index]
                assert progress[0] == 0 and len(progress) == 5

                bad = await client.call_tool("show_mission", {"mission_id": "nope"})
                assert bad.is_error
                assert bad.content[0].text.startswith("unknown mission 'nope'")  # type: ignore[union-attr]
                await watch_a_change(client, demo)

        anyio.run(scenario)
