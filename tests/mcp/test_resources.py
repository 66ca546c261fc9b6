"""Resources by URI: listed as the files exist, read, refused outside ``.harness/``, and a
change to a file is announced on a ``subscriptions/listen`` stream."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest

from tests.mcp.conftest import TIMEOUT_S, TRANSPORTS, connect

if TYPE_CHECKING:  # the SDK is imported where it is used (tests/mcp/conftest.py says why)
    from mcp import Client


async def watch_a_change(client: Client, demo: Path) -> None:
    """Read the mission file, listen, change it: the listener hears its URI."""
    from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated

    uri = "uh://missions/divide/mission.yaml"
    read = await client.read_resource(uri)
    path = demo / ".harness/missions/divide/mission.yaml"
    assert read.contents[0].text == path.read_text()  # type: ignore[union-attr]
    async with client.listen(resource_subscriptions=[uri], resources_list_changed=True) as sub:
        with path.open("a") as handle:  # once the stream is acknowledged
            handle.write("# touched\n")
        with anyio.fail_after(TIMEOUT_S):
            async for event in sub:
                if isinstance(event, ResourceUpdated) and event.uri == uri:
                    break
        (demo / ".harness/runs").mkdir(exist_ok=True)
        (demo / ".harness/runs/h-1.json").write_text('{"run_id": "h-1"}\n')
        with anyio.fail_after(TIMEOUT_S):
            async for event in sub:
                if isinstance(event, ResourcesListChanged):
                    break
    again = await client.read_resource(uri)
    assert again.contents[0].text.endswith("# touched\n")  # type: ignore[union-attr]
    ledger = await client.read_resource("uh://runs/h-1")
    assert ledger.contents[0].text == '{"run_id": "h-1"}\n'  # type: ignore[union-attr]


@TRANSPORTS
def test_read_list_and_watch_resources(demo: Path, transport: str) -> None:
    from mcp.shared.exceptions import MCPError

    async def scenario() -> None:
        async with connect(transport, demo) as client:
            uris = {r.uri for r in (await client.list_resources()).resources}
            assert {f"uh://missions/{m}/mission.yaml" for m in ("divide", "mean")} <= uris
            templates = {
                t.uri_template for t in (await client.list_resource_templates()).resource_templates
            }
            assert "uh://missions/{mission_id}/verification.yaml" in templates
            assert "uh://runs/{run_id}" in templates
            for bad, says in (
                ("uh://missions/nope/verification.yaml", "no such file"),
                ("uh://missions/divide/verification.yaml", "no such file"),  # never verified
                ("uh://runs/..%2F..%2Fproject", "Unknown resource"),
                ("uh://missions/divide/../../project.yaml", "Unknown resource"),
                ("uh://missions/..%2F..%2Fx/mission.yaml", "Unknown resource"),
            ):
                with pytest.raises(MCPError, match=says):
                    await client.read_resource(bad)
            await watch_a_change(client, demo)

    anyio.run(scenario)


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
def test_a_pre_2026_client_subscribes(demo: Path) -> None:
    """``resources/subscribe`` (the handshake era most agent CLIs speak) hears the change."""
    import mcp_types
    from mcp import Client

    from tests.mcp.conftest import stdio_params

    uri = "uh://missions/mean/mission.yaml"
    heard = anyio.Event()

    async def on_message(message: object) -> None:
        if isinstance(message, mcp_types.ResourceUpdatedNotification) and message.params.uri == uri:
            heard.set()

    async def scenario() -> None:
        client = Client(
            stdio_params(demo),
            mode="legacy",
            message_handler=on_message,
            read_timeout_seconds=TIMEOUT_S,
        )
        async with client:
            assert client.server_capabilities.resources.subscribe  # type: ignore[union-attr]
            await client.session.subscribe_resource(uri)
            with (demo / ".harness/missions/mean/mission.yaml").open("a") as handle:
                handle.write("# touched\n")
            with anyio.fail_after(TIMEOUT_S):
                await heard.wait()

    anyio.run(scenario)
