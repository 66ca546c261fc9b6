"""The HTTP transport's bearer token: only its operator drives ``uh-core mcp --http``.

Binding loopback keeps other machines out, and the SDK turns away a foreign ``Origin`` (403)
or ``Host`` (421), so a web page cannot reach it; but any process or user on this machine
that can reach the port could call ``verify_mission`` or ``start_run`` — which run checks
and agent CLIs as the operator, with the operator's keys. So every HTTP request must carry
``Authorization: Bearer <token>``:

- the token is made on the first start (``secrets.token_urlsafe(32)``: 256 bits) in a file
  only the operator can read — mode 0600, in a 0700 folder, created exclusively, never
  followed through a symbolic link — under the state folder (``mcp-token``), or at
  ``--token-file PATH``; a file others can read, or that is not a regular file, is refused;
- a request without it, or with another one, gets the same ``401`` (compared in constant
  time: ``hmac.compare_digest``), before the SDK sees it;
- the token is never printed: the server says where the file is.

stdio needs none: the client started the server itself.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import stat
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from uh_core.errors import UsageError
from uh_core.layout import Layout

FILE_NAME = "mcp-token"
MIN_LENGTH = 32  # characters: a token the operator wrote by hand must not be guessable

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def default_file(layout: Layout) -> Path:
    return layout.state_dir / FILE_NAME


def load_or_create(path: Path) -> str:
    """The token in ``path``, made there (0600) when the file does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return _create(path)
    except OSError as exc:
        raise UsageError(
            f"--token-file {path}: cannot read it: {exc.strerror}",
            fix="point --token-file at a regular file of yours (not a symbolic link)",
        ) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UsageError(f"--token-file {path}: not a regular file", fix="use a file")
        if info.st_mode & 0o077:
            raise UsageError(
                f"{path}: the token file can be read by others (mode "
                f"{stat.S_IMODE(info.st_mode):o})",
                fix=f"chmod 600 {path}, or delete it to have a new token made",
            )
        if info.st_uid != os.getuid():
            raise UsageError(f"{path}: the token file is not yours", fix="use a file you own")
        token = handle.read(4096).decode("utf-8", "replace").strip()
    if len(token) < MIN_LENGTH or any(c.isspace() for c in token):
        raise UsageError(
            f"{path}: not a token (one word of at least {MIN_LENGTH} characters)",
            fix="delete the file to have a new token made",
        )
    return token


def _create(path: Path) -> str:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another server made it meanwhile: read that one
        return load_or_create(path)
    except OSError as exc:
        raise UsageError(
            f"--token-file {path}: cannot create it: {exc.strerror}", fix="choose a folder of yours"
        ) from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(token.encode() + b"\n")
    return token


def guarded(app: App, token: str) -> App:
    """``app`` behind the bearer token: HTTP requests without it get 401, all alike."""
    expected = f"Bearer {token}".encode()
    body = json.dumps({"error": "unauthorized", "detail": "a bearer token is required"}).encode()

    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await app(scope, receive, send)  # lifespan: the server's own start and stop
            return
        given = b""
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                given = value
        if hmac.compare_digest(given, expected) and scope["type"] == "http":
            await app(scope, receive, send)
            return
        if scope["type"] == "websocket":  # not a transport of MCP: never accepted
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="uh"'),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return guard
