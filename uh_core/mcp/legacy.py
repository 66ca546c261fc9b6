"""``resources/subscribe`` for clients on protocol versions before 2026-07-28 (most agent
CLIs and editors today): the same change events as ``subscriptions/listen``, taken from the
same bus, sent to each session subscribed to the URI as ``notifications/resources/updated``.

The bus calls listeners synchronously on the event loop; they only queue the event (a
bounded queue: a burst beyond it is dropped, and the next change announces again), and
one task sends. A session that cannot be written to any more is forgotten.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
from mcp.server.lowlevel.server import Server
from mcp.server.subscriptions import ResourceUpdated, ServerEvent, SubscriptionBus
from mcp_types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

QUEUE = 1024


class LegacySubscriptions:
    def __init__(self, bus: SubscriptionBus) -> None:
        self.sessions: dict[Any, set[str]] = {}  # ServerSession → subscribed URIs
        self._send, self._receive = anyio.create_memory_object_stream[ServerEvent](QUEUE)
        bus.subscribe(self._queue)

    def install(self, server: Server[Any]) -> None:
        server.add_request_handler("resources/subscribe", SubscribeRequestParams, self.subscribe)
        server.add_request_handler(
            "resources/unsubscribe", UnsubscribeRequestParams, self.unsubscribe
        )

    async def subscribe(self, ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
        self.sessions.setdefault(ctx.session, set()).add(str(params.uri))
        return EmptyResult()

    async def unsubscribe(self, ctx: Any, params: UnsubscribeRequestParams) -> EmptyResult:
        self.sessions.get(ctx.session, set()).discard(str(params.uri))
        return EmptyResult()

    def _queue(self, event: ServerEvent) -> None:
        if isinstance(event, ResourceUpdated) and self.sessions:
            with contextlib.suppress(anyio.WouldBlock):
                self._send.send_nowait(event)

    async def run(self) -> None:
        async with self._receive:
            async for event in self._receive:
                assert isinstance(event, ResourceUpdated)
                for session, uris in list(self.sessions.items()):
                    if event.uri not in uris:
                        continue
                    try:
                        await session.send_resource_updated(event.uri)
                    except Exception:  # that client is gone
                        self.sessions.pop(session, None)
