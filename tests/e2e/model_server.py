"""A scripted model server on 127.0.0.1 for driving the real agent CLIs with no network.

It speaks just enough of the three wire protocols the CLIs use, from their public API
documentation and the requests the CLIs were recorded sending
(``tests/adapters/fixtures/capture/``):

- ``POST /v1/responses``: OpenAI Responses API, server-sent events (codex);
- ``POST /v1/messages``: Anthropic Messages API, server-sent events (claude);
- ``POST /v1/chat/completions``: OpenAI Chat Completions, streamed or not (pi, omp, aider,
  hermes).

Each reply is decided from the request itself (how many tool results the conversation holds),
so it is deterministic and needs no session state. A ``Script`` says what the model does:

- ``edit``: read the target file with a tool, then write it with one line appended, then a
  final text ending with the ``uh-runtime-final-message`` block (aider, which has no tools,
  gets one SEARCH/REPLACE block and the final text in one reply);
- ``noop``: at once a final text claiming the work is done, with no edit;
- ``auth``: HTTP 401 for every model call;
- ``slow``: each model call waits ``delay`` seconds first (for cancellation);
- ``hold`` (any mode): the first model call waits until the event is set (for steering);
- ``badedit``: aider's SEARCH/REPLACE block searches for a line the file does not have (a
  reply aider cannot apply, however often it asks again);
- ``ratelimit``: HTTP 429 with ``Retry-After: <retry_after>`` and the provider's own error
  body (OpenAI's ``rate_limit_exceeded``, which also says "try again in Ns" as OpenAI's
  does; Anthropic's ``rate_limit_error``, which does not);
- ``usagelimit``: HTTP 429, no ``Retry-After``, a body saying "usage limit reached … resets
  at <ISO time ``resets_in`` seconds ahead>" (OpenAI's with codex's ``usage_limit_reached``
  type and ``resets_at``).

``ratelimit`` and ``usagelimit`` refuse the first ``limited_calls`` model calls (every one
when None), then answer as ``edit`` does.

Every request is kept in ``requests`` (method, path, headers, body), in order.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from tests.e2e import model_replies

Mode = Literal["edit", "noop", "auth", "slow", "badedit", "ratelimit", "usagelimit"]
LIMITS = ("ratelimit", "usagelimit")
# how often serving looks whether it is to stop: ``shutdown`` waits up to this long (the
# default, 0.5 s, was most of an end-to-end test's teardown)
_SHUTDOWN_POLL_S = 0.02


@dataclass
class Script:
    mode: Mode = "edit"
    target: str = "a.txt"
    old: str = "hi"  # the target's content before (one line)
    line: str = "hello from the agent"  # the line the edit appends
    delay: float = 60.0  # seconds, for ``slow``
    retry_after: int = 3  # seconds, the ``Retry-After`` of ``ratelimit``
    resets_in: float = 5.0  # seconds from the answer to the reset ``usagelimit`` names
    limited_calls: int | None = None  # ``ratelimit``/``usagelimit``: the first N; None: all
    # the first model call waits until this is set (a test steers the agent meanwhile)
    hold: threading.Event | None = None

    @property
    def new(self) -> str:
        return f"{self.old}\n{self.line}\n"

    @property
    def summary(self) -> str:
        # longer than 80 columns: a CLI that wraps its output must not cut the final message
        return (
            f"appended the line {self.line!r} to {self.target}, read it back, and checked that "
            "nothing else in the file changed"
        )

    @property
    def final(self) -> str:
        # no file name before the block: aider's "whole" format must not take it for a file
        claim = "changed nothing" if self.mode == "noop" else "made the change"
        return (
            f"I {claim} and the work is done.\n\n"
            "```uh-runtime-final-message\n"
            "status: completed\n"
            f"summary: {self.summary}\n"
            f"files_changed: [{self.target}]\n"
            "```\n"
        )

    @property
    def aider_edit(self) -> str:
        search = "no such line" if self.mode == "badedit" else self.old
        return (
            f"{self.target}\n```\n<<<<<<< SEARCH\n{search}\n=======\n{self.old}\n{self.line}\n"
            f">>>>>>> REPLACE\n```\n\n{self.final}"
        )


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ModelServer:
    """``with ModelServer() as server:`` serves on ``server.url`` until the block ends."""

    script: Script = field(default_factory=Script)
    requests: list[Seen] = field(default_factory=list)
    refused: int = 0  # model calls answered with a limit (``ratelimit``, ``usagelimit``)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(_SHUTDOWN_POLL_S,), daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def record(self, seen: Seen) -> None:
        with self._lock:
            self.requests.append(seen)

    def model_calls(self) -> list[Seen]:
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and _is_model_call(r.path)]

    def limited(self) -> bool:
        """Whether the model call just recorded is refused with a limit (``ratelimit``,
        ``usagelimit``: the first ``limited_calls``, or all); counted in ``refused``."""
        script = self.script
        if script.mode not in LIMITS:
            return False
        with self._lock:
            if script.limited_calls is not None and self.refused >= script.limited_calls:
                return False
            self.refused += 1
            return True


def _is_model_call(path: str) -> bool:
    path = path.split("?")[0]
    return path.endswith(("/responses", "/messages", "/chat/completions"))


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(_Handler):
        owner = server

    return Handler


class _Handler(BaseHTTPRequestHandler):
    owner: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    # -- plumbing ---------------------------------------------------------------------
    def _body(self) -> Any:
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(size) if size else b""
        encoding = self.headers.get("content-encoding")
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "zstd":
            try:
                import zstandard  # type: ignore[import-not-found]
            except ImportError:
                return {"_undecoded": "zstd"}
            raw = zstandard.ZstdDecompressor().decompress(raw, max_output_size=50_000_000)
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"_raw": raw[:2000].decode("latin-1")}

    def _json(self, code: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _sse_start(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True

    def _sse(self, event: str | None, payload: Any) -> None:
        text = f"event: {event}\n" if event else ""
        text += "data: " + (payload if isinstance(payload, str) else json.dumps(payload)) + "\n\n"
        self.wfile.write(text.encode())
        self.wfile.flush()

    # -- routing ----------------------------------------------------------------------
    def do_GET(self) -> None:
        self.owner.record(Seen("GET", self.path, dict(self.headers), None))
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            model = {"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}
            self._json(200, {"object": "list", "data": [model]})
            return
        self._json(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        body = self._body()
        self.owner.record(Seen("POST", self.path, dict(self.headers), body))
        path = self.path.split("?")[0]
        script = self.owner.script
        if script.mode == "slow" and _is_model_call(path):
            time.sleep(script.delay)
        if script.hold is not None and _is_model_call(path) and len(self.owner.model_calls()) == 1:
            script.hold.wait(60)  # the agent is at work, its turn not ended
        if script.mode == "auth" and _is_model_call(path):
            self._refuse(path)
        elif _is_model_call(path) and self.owner.limited():
            self._limit(path, script)
        elif path.endswith("/responses"):
            self._responses(body, script)
        elif path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": 1200})
        elif path.endswith("/messages"):
            self._messages(body, script)
        elif path.endswith("/chat/completions"):
            self._chat(body, script)
        else:
            self._json(404, {"error": {"message": "not found"}})

    def _refuse(self, path: str) -> None:
        if path.endswith("/messages"):
            error = {"type": "authentication_error", "message": "invalid x-api-key"}
            self._json(401, {"type": "error", "error": error})
            return
        error = {
            "message": "Incorrect API key provided: sk-mock.",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
        self._json(401, {"error": error})

    def _limit(self, path: str, script: Script) -> None:
        """HTTP 429 as the provider words it: a rate limit, or a usage limit with its reset."""
        anthropic = path.endswith("/messages")
        if script.mode == "ratelimit":
            body = model_replies.rate_limit_body(anthropic, script.retry_after)
            headers = {"retry-after": str(script.retry_after)}
        else:
            body = model_replies.usage_limit_body(anthropic, time.time() + script.resets_in)
            headers = {}
        self._json(429, body, headers)

    # the three protocols' replies: tests/e2e/model_replies.py
    def _responses(self, body: Any, script: Script) -> None:
        model_replies.responses(self, body, script)

    def _messages(self, body: Any, script: Script) -> None:
        model_replies.messages(self, body, script)

    def _chat(self, body: Any, script: Script) -> None:
        model_replies.chat(self, body, script)
