"""The server: tools (``tools.py``), resources (``resources.py``) and the harness's prompt,
served over stdio or streamable HTTP, with the resource watcher running beside it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from mcp_types import Resource as MCPResource

from uh_core import __version__
from uh_core.layout import Layout
from uh_core.mcp import resources, tools
from uh_core.mcp.calls import Refusal, call_json
from uh_core.mcp.legacy import LegacySubscriptions
from uh_core.mcp.runs import Runs

INSTRUCTIONS = (
    "uh (Ultimate Harness) verifies coding missions against their acceptance criteria and "
    "runs agents on them. List missions, verify one (progress per criterion), read why it "
    "failed (show_mission, the verification record resource, tail_events), run agents in "
    "the background. uh never promotes through MCP: landing a change on the operator's "
    "branch is a person's decision."
)


class UhServer(MCPServer):
    """``MCPServer`` whose resource list is the files that exist now (read through the
    URI templates)."""

    def __init__(self, layout: Layout, bus: InMemorySubscriptionBus) -> None:
        super().__init__(
            name="uh",
            title="Ultimate Harness",
            instructions=INSTRUCTIONS,
            version=__version__,
            log_level="WARNING",
            subscriptions=bus,
        )
        self.layout = layout

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """A refusal's text is the CLI's line as it is, without the SDK's ``Error
        executing tool NAME:`` in front."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, Refusal):
                text = TextContent(type="text", text=str(exc.__cause__))
                return CallToolResult(content=[text], is_error=True)
            raise

    async def list_resources(self) -> list[MCPResource]:
        found = await anyio.to_thread.run_sync(resources.entries, self.layout)
        return [
            MCPResource(
                uri=uri,
                name=uri.removeprefix(resources.SCHEME),
                description=kind.description,
                mime_type=kind.mime,
            )
            for uri, kind, _path in found
        ]


def _register_resources(server: MCPServer, layout: Layout) -> None:
    def reader_of(kind: resources.Kind) -> Callable[[str], str]:
        def reader(mission_id: str) -> str:
            return resources.read(layout, kind, mission_id)

        return reader

    for kind in resources.MISSION_FILES:
        server.resource(
            resources.mission_uri("{mission_id}", kind.name),
            name=kind.name,
            description=f"{kind.description} of a mission",
            mime_type=kind.mime,
        )(reader_of(kind))

    def ledger(run_id: str) -> str:
        return resources.read(layout, resources.LEDGER, run_id)

    server.resource(
        resources.ledger_uri("{run_id}"),
        name="ledger",
        description=resources.LEDGER.description,
        mime_type=resources.LEDGER.mime,
    )(ledger)


def _register_prompts(server: MCPServer, layout: Layout) -> None:
    root = str(layout.root)

    @server.prompt(
        name="harness_prompt",
        description="The exact prompt the delivery loop would send an agent for a mission "
        "(`uh-core harness prompt ID`), attempt 1.",
    )
    async def harness_prompt(mission_id: str, profile: str | None = None) -> str:
        extra = ["--profile", profile] if profile else []
        data = await call_json("harness", "prompt", mission_id, *extra, "--json", "--root", root)
        text: str = data["prompt"]
        return text


def build(layout: Layout) -> tuple[UhServer, Runs, list[Callable[[], Coroutine[Any, Any, None]]]]:
    """The server, its runs, and the tasks that serve beside it (watcher, legacy sender)."""
    bus = InMemorySubscriptionBus()
    server = UhServer(layout, bus)
    runs = Runs(layout)
    tools.register(server, layout, runs)
    _register_resources(server, layout)
    _register_prompts(server, layout)
    legacy = LegacySubscriptions(bus)
    legacy.install(server._lowlevel_server)
    return server, runs, [resources.Watcher(layout, bus).run, legacy.run]


def serve(
    layout: Layout, http: tuple[str, int] | None, token: tuple[str, str] | None = None
) -> None:
    """Serve over stdio, or over HTTP at ``http`` behind ``token`` (its file, its value)."""
    server, runs, beside = build(layout)
    sock = None if http is None else _bind(*http)  # refused here: one line, exit 2
    if sock is not None and token is None:
        raise ValueError("the HTTP transport is served only behind a bearer token")

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for task in beside:
                group.start_soon(task)
            if sock is None:
                await server.run_stdio_async()
            else:
                assert token is not None
                await _serve_http(server, sock, token)
            group.cancel_scope.cancel()

    try:
        anyio.run(main)
    except BaseException as exc:  # a signal or a crash: the runs it started end with it
        runs.stop_all()  # (their records say interrupted)
        if _interrupted(exc):
            _exit_interrupted()
        raise
    runs.close()  # the client went away: its runs go on


def _interrupted(exc: BaseException) -> bool:
    """Ctrl-C, SIGTERM or SIGHUP (``KeyboardInterrupt``, see ``uh_core.cli.main``), also
    from inside a task group (uvicorn raises the signal it caught again once it has shut
    down)."""
    if isinstance(exc, BaseExceptionGroup):
        return exc.subgroup(KeyboardInterrupt) is not None
    return isinstance(exc, KeyboardInterrupt)


def _exit_interrupted() -> NoReturn:
    """Exit 130 now: the stdio transport's reader thread may be blocked reading stdin, which
    the client keeps open, and an ordinary exit would wait for that thread for ever."""
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        sys.stderr.write("uh-core: error: interrupted\n")
        sys.stderr.flush()
    os._exit(130)


def _bind(host: str, port: int) -> socket.socket:
    """The HTTP socket, bound before anything is served: port 0 works, and the line saying
    where is printed only once connections are accepted."""
    from uh_core.errors import UsageError

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UsageError(
            f"--http {host}:{port}: {exc.strerror}", fix="choose another port, or 0 for a free one"
        ) from None
    return sock


async def _serve_http(server: MCPServer, sock: socket.socket, token: tuple[str, str]) -> None:
    import uvicorn

    from uh_core.mcp.token import guarded

    host, bound = sock.getsockname()[:2]
    # the SDK's own Origin and Host checks stay inside; the token is checked first
    app = guarded(server.streamable_http_app(host=host), token[1])
    config: Any = uvicorn.Config(app, log_level="warning", lifespan="on")
    where = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"uh-core mcp: every request needs the bearer token in {token[0]}\n")
    sys.stderr.write(f"uh-core mcp: serving http://{where}:{bound}/mcp\n")
    sys.stderr.flush()
    http = uvicorn.Server(config)
    # uvicorn shuts down gracefully on SIGINT and SIGTERM, then raises the signal again (our
    # handler: KeyboardInterrupt, the runs stopped, exit 130); a SIGHUP takes SIGTERM's way
    hangup = signal.getsignal(signal.SIGHUP)
    if hangup not in (signal.SIG_IGN, None):
        signal.signal(signal.SIGHUP, lambda _sig, frame: http.handle_exit(signal.SIGTERM, frame))
    try:
        await http.serve(sockets=[sock])
    finally:
        if hangup is not None:
            signal.signal(signal.SIGHUP, hangup)
