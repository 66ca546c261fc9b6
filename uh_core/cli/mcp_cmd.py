"""``uh-core mcp [--root PATH] [--http HOST:PORT]``: uh as an MCP server (docs/mcp.md).

The ``mcp`` SDK is an optional extra, imported only here, when the command runs.
"""

from __future__ import annotations

import argparse
import ipaddress
from pathlib import Path

from uh_core.cli.common import EXIT_OK, add_root, context, require_harness
from uh_core.errors import UsageError

DEFAULT_HOST = "127.0.0.1"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "mcp",
        help="serve uh to MCP clients (agents, editors) over stdio or HTTP",
        description="Serve the missions, verify, runs, events, harness plan and report as "
        "an MCP server: over stdio (default), or streamable HTTP with --http. There is no "
        "promotion tool: landing a change stays a person's decision.",
    )
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        default=None,
        help=f"streamable HTTP at http://HOST:PORT/mcp (HOST default {DEFAULT_HOST}; "
        "PORT 0 picks a free one, printed on stderr)",
    )
    parser.add_argument(
        "--token-file",
        metavar="PATH",
        default=None,
        help="--http: the bearer token every request must carry (made here, mode 0600, when "
        "missing; default: mcp-token in the state folder)",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="--http: serve on an address other machines can reach (the token still required)",
    )
    add_root(parser)
    parser.set_defaults(handler=handle)


def parse_http(text: str) -> tuple[str, int]:
    host, _, port_text = text.rpartition(":")
    host = host.strip("[]") or DEFAULT_HOST
    try:
        port = int(port_text)
    except ValueError:
        raise UsageError(
            f"--http {text}: no port", fix="use HOST:PORT, e.g. 127.0.0.1:8765"
        ) from None
    if not 0 <= port <= 65535:
        raise UsageError(f"--http {text}: port out of range", fix="use a port from 0 to 65535")
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise UsageError(
                f"--http {text}: {host} is not an IP address", fix="e.g. 127.0.0.1"
            ) from None
    return host, port


def is_loopback(host: str) -> bool:
    return host == "localhost" or ipaddress.ip_address(host).is_loopback


def handle(args: argparse.Namespace) -> int:
    ctx = context(args)
    require_harness(ctx)
    http = parse_http(args.http) if args.http else None
    if http is None and (args.token_file or args.allow_remote):
        raise UsageError(
            "--token-file and --allow-remote are for --http (stdio needs no token: the "
            "client started the server)",
            fix="add --http HOST:PORT, or drop them",
        )
    if http is not None and not is_loopback(http[0]) and not args.allow_remote:
        raise UsageError(
            f"--http {args.http}: {http[0]} is not a loopback address: other machines could "
            "reach the server, which runs checks and agents as you",
            fix="serve on 127.0.0.1, or pass --allow-remote (every request still needs the "
            "bearer token)",
        )
    try:
        from uh_core.mcp.server import serve
    except ImportError as exc:
        raise UsageError(
            f"the MCP server needs the mcp package ({exc.msg})",
            fix="python3 -m pip install 'ultimate-harness[mcp]'",
        ) from None
    token = None
    if http is not None:
        from uh_core.mcp.token import default_file, load_or_create

        where = Path(args.token_file).expanduser() if args.token_file else None
        where = where or default_file(ctx.layout)
        token = (str(where), load_or_create(where))
    serve(ctx.layout, http, token)
    return EXIT_OK
