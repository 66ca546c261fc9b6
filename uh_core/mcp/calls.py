"""The one way a tool reaches the engine: the CLI's own handler, parsed by the CLI's own
parser, with its ``--json`` document captured instead of printed.

So a tool returns exactly what ``uh-core … --json`` prints and refuses exactly what it
refuses (``UhError.one_line()``, the line the CLI writes after ``uh-core: error:``): there
is no second code path to drift. Handlers run in worker threads; ``sys.stdout`` is a proxy
that sends each thread's output to that thread's buffer while it runs a handler.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import anyio.to_thread
from mcp.server.mcpserver.exceptions import ToolError

from uh_core.errors import UhError


class _ThreadStdout(io.TextIOBase):
    """``sys.stdout`` for the server: a thread capturing writes to its buffer, else the
    original stream (on stdio that is stderr: the SDK keeps the wire to itself)."""

    def __init__(self, original: TextIO) -> None:
        self.original = original
        self.local = threading.local()

    def write(self, text: str) -> int:
        buffer: io.StringIO | None = getattr(self.local, "buffer", None)
        if buffer is not None:
            return buffer.write(text)
        return self.original.write(text)

    def flush(self) -> None:
        if getattr(self.local, "buffer", None) is None:
            self.original.flush()


_PROXY: _ThreadStdout | None = None  # installed at the first call, after stdio claimed fd 1
_PARSER: argparse.ArgumentParser | None = None
_PARSER_LOCK = threading.Lock()


def install_stdout_proxy() -> None:
    global _PROXY
    if _PROXY is None:
        _PROXY = _ThreadStdout(sys.stdout)
        sys.stdout = _PROXY


def _parser() -> argparse.ArgumentParser:
    global _PARSER
    with _PARSER_LOCK:
        if _PARSER is None:
            from uh_core.cli.main import build_parser

            parser = build_parser()
            _raise_errors(parser)
            _PARSER = parser
        return _PARSER


class _ArgError(Exception):
    pass


def _raise_errors(parser: argparse.ArgumentParser) -> None:
    """argparse's ``error`` prints and exits; in a server it raises instead (every parser)."""

    def error(message: str) -> Any:
        raise _ArgError(message)

    parser.error = error  # type: ignore[method-assign]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _raise_errors(child)


class Refusal(ToolError):
    """Bad input refused as the CLI refuses it; the tool error's text is exactly this."""


def tool_error(message: str) -> Refusal:
    """A tool error whose text is the CLI's one line (without ``uh-core: error:``)."""
    return Refusal(" ".join(message.split()))


def call_sync(argv: Sequence[str]) -> tuple[int, str]:
    """Run one CLI command in this thread: (exit code, what it printed on stdout)."""
    from uh_core.cli.main import _parse

    install_stdout_proxy()
    assert _PROXY is not None
    try:
        args = _parse(_parser(), list(argv))
    except _ArgError as exc:
        raise tool_error(str(exc)) from None
    buffer = io.StringIO()
    _PROXY.local.buffer = buffer
    try:
        code: int = args.handler(args)
    except UhError as exc:
        raise tool_error(exc.one_line()) from None
    finally:
        _PROXY.local.buffer = None
    return code, buffer.getvalue()


async def call_json(*argv: str) -> Any:
    """``uh-core ARGV`` (which includes ``--json``) in a worker thread: its JSON document."""
    _code, out = await anyio.to_thread.run_sync(call_sync, argv)
    try:
        return json.loads(out)
    except ValueError:
        raise tool_error(f"uh-core {argv[0]} printed no JSON document") from None


def inside(root: Path, rel: str) -> Path:
    """``rel`` resolved under ``root``; anything that lands outside is refused."""
    if "\0" in rel:
        raise tool_error(f"{rel!r}: not a path")
    path = (root / rel).resolve()
    if path != root and root not in path.parents:
        raise tool_error(f"{rel}: outside the root {root} (refused)")
    return path


def uh_core_argv() -> list[str]:
    """``uh-core`` as this very interpreter runs it: the server and its children are the
    same installation (the dashboard prefers the script on PATH; a server is one process
    that already knows where its code is)."""
    return [sys.executable, "-m", "uh_core"]
