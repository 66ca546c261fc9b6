#!/usr/bin/env python3
"""What the MCP HTTP transport's bearer token costs a tool call (uh_core/mcp/token.py).

Two ``uh-core mcp --http 127.0.0.1:0`` servers on the same demo-sized project:

- **without**: the token check replaced by nothing in that process (the transport as it was
  before the token);
- **with**: the code as it ships.

One SDK client session on each (both send the header; the first ignores it), then interleaved
rounds of ``list_missions`` and ``show_mission``, one call of each on each server per round,
after a warm-up round. Printed: the median milliseconds of each and their ratio (the target:
at most 1.05).

    python3 benchmarks/mcp_http_auth.py [--rounds 40]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
SERVE = """\
import sys
if sys.argv.pop(1) == "without":
    import uh_core.mcp.token as token
    token.guarded = lambda app, _token: app
from uh_core.cli.main import main
sys.argv[0] = "uh-core"
main()
"""
TOKEN_LINE = "uh-core mcp: every request needs the bearer token in "


@contextlib.contextmanager
def server(root: Path, mode: str, log: Path) -> Iterator[tuple[str, str]]:
    argv = [sys.executable, "-c", SERVE, mode, "mcp", "--root", str(root), "--http", "127.0.0.1:0"]
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=err, cwd=ROOT)
    try:
        url = token = None
        deadline = time.monotonic() + 120
        while url is None or token is None:
            for line in log.read_text(errors="replace").splitlines():
                if line.startswith("uh-core mcp: serving "):
                    url = line.removeprefix("uh-core mcp: serving ").strip()
                if line.startswith(TOKEN_LINE):
                    token = Path(line.removeprefix(TOKEN_LINE).strip()).read_text().strip()
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the {mode} server did not start: {log.read_text()}")
            time.sleep(0.05)
        yield url, token
    finally:
        proc.terminate()
        proc.wait(30)


async def measure(urls: dict[str, tuple[str, str]], rounds: int) -> dict[str, list[float]]:
    from mcp import Client
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    times: dict[str, list[float]] = {mode: [] for mode in urls}
    async with contextlib.AsyncExitStack() as stack:
        clients = {}
        for mode, (url, token) in urls.items():
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            transport = streamable_http_client(url, http_client=http)
            clients[mode] = await stack.enter_async_context(Client(transport))
        for n in range(rounds + 1):
            order = list(clients) if n % 2 else list(reversed(clients))
            for mode in order:
                started = time.perf_counter()
                await clients[mode].call_tool("list_missions", {})
                await clients[mode].call_tool("show_mission", {"mission_id": "divide"})
                if n:  # the first round warms both up
                    times[mode].append((time.perf_counter() - started) * 1000 / 2)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    from uh_core.demo.build import build_demo

    with tempfile.TemporaryDirectory(prefix="uh-bench-mcp-auth-") as scratch:
        base = Path(scratch)
        os.environ["UH_STATE_DIR"] = str(base / "state")
        root = build_demo(base / "demo").layout.root
        with (
            server(root, "without", base / "without.log") as plain,
            server(root, "with", base / "with.log") as guarded,
        ):
            times = anyio.run(measure, {"without": plain, "with": guarded}, args.rounds)
    medians = {mode: statistics.median(values) for mode, values in times.items()}
    for mode, value in medians.items():
        print(f"{mode:>7} the token: a tool call {value:.2f} ms (median of {len(times[mode])})")
    print(f"with / without = {medians['with'] / medians['without']:.3f} (target <= 1.05)")


if __name__ == "__main__":
    main()
