"""Shared pieces of the real-CLI adapters (codex, claude, pi, oh-my-pi, aider, hermes).

- safe decoding of one JSON line and typed access to its fields: an agent's output is
  untrusted input, so a garbage line, a torn object or a field of the wrong type gives
  ``None``/``0``/``{}`` here and never an exception in a parser;
- ``CliParser``/``JsonLinesParser``: ``OutputParser`` with the worktree known (paths are
  reported relative to it), usage accumulation and a guard that turns any surprise in
  one event into a log event;
- ``CliAdapter``: ``Adapter`` with the manifest settings every CLI reads (model, provider,
  choices from ``runtime_config``), stale side files removed at launch and an install
  hint when the binary is missing.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, ClassVar

from uh_core.adapters.base import (
    Adapter,
    Availability,
    Continuation,
    LaunchContext,
    LaunchPlan,
    ObserveEvent,
    OutputParser,
    Session,
)
from uh_core.adapters.usage import Usage
from uh_core.errors import AdapterError
from uh_core.safeopen import UnsafePathError, open_binary

JsonObject = dict[str, Any]

MESSAGE_LIMIT = 200  # tool calls, statuses, blockers
LOG_LIMIT = 500  # the model's text as a log event
SIDE_FILE_LIMIT = 8 << 20  # side files and stdout re-read at the end: the last 8 MiB at most


# --- decoding --------------------------------------------------------------------------
def decode_object(line: bytes | str) -> JsonObject | None:
    """The JSON object on this line, or None (blank, not JSON, torn, not an object)."""
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def obj(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def objects(value: object) -> list[JsonObject]:
    """The dict elements of a list (anything else dropped)."""
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, dict)]


def string(value: object) -> str | None:
    return value if isinstance(value, str) else None


def integer(value: object) -> int:
    """A token count: an int (not a bool) or a whole float; anything else is 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return 0


def number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def clip(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """One line: whitespace collapsed, cut at ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# --- side files ------------------------------------------------------------------------
def read_text(path: str | Path, limit: int = SIDE_FILE_LIMIT) -> str | None:
    """A file's text (its last ``limit`` bytes), or None when it does not exist."""
    try:
        with open_binary(Path(path), os.O_RDONLY, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > limit:
                handle.seek(size - limit)
            data = handle.read(limit)
    except (OSError, UnsafePathError):
        return None
    return data.decode("utf-8", "replace")


def read_json(path: str | Path) -> JsonObject | None:
    text = read_text(path)
    if text is None:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def read_json_lines(path: str | Path) -> list[JsonObject]:
    text = read_text(path)
    if text is None:
        return []
    found = (decode_object(line) for line in text.splitlines())
    return [item for item in found if item is not None]


# --- parsers ---------------------------------------------------------------------------
class CliParser(OutputParser):
    """An ``OutputParser`` that knows the worktree and sums usage."""

    def __init__(self) -> None:
        super().__init__()
        self.root: Path | None = None

    def bind(self, plan: LaunchPlan) -> None:
        self.root = Path(plan.cwd)

    def rel(self, path: str) -> str:
        """``path`` relative to the worktree when it lies inside it, else as given."""
        if self.root is None or not os.path.isabs(path):
            return path
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            pass
        try:  # the CLI may report the resolved path (/tmp → /private/tmp, symlinks)
            return str(Path(path).relative_to(self.root.resolve()))
        except (ValueError, OSError):
            return path

    def add_usage(
        self,
        input_tokens: int,
        output_tokens: int,
        cost: float | None,
        *,
        cache_read: int = 0,
        cache_write: int = 0,
        model: str | None = None,
    ) -> None:
        """One report: ``input_tokens`` counts every input token, the cached ones too."""
        self.meter.add(Usage(input_tokens, output_tokens, cost, cache_read, cache_write, model))

    def said(self, text: str) -> list[ObserveEvent]:
        """The model said ``text``: kept for sentinel extraction, shown as a log event."""
        if not text.strip():
            return []
        self.text_parts.append(text)
        return [ObserveEvent("log", clip(text, LOG_LIMIT))]


class JsonLinesParser(CliParser):
    """One JSON object per line, dispatched to ``on_event``; never raises."""

    def feed(self, line: bytes) -> list[ObserveEvent]:
        event = decode_object(line)
        if event is None:
            text = clip(line.decode("utf-8", "replace"))
            return [ObserveEvent("log", f"(not JSON) {text}")] if text else []
        try:
            return self.on_event(event)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            kind = string(event.get("type")) or "?"
            return [ObserveEvent("log", clip(f"unreadable {kind} event: {exc}"))]

    def on_event(self, event: JsonObject) -> list[ObserveEvent]:
        raise NotImplementedError


# --- adapters --------------------------------------------------------------------------
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")  # a CLI's session or thread id


class CliAdapter(Adapter):
    """An adapter for a real agent CLI on PATH."""

    install_hint: ClassVar[str] = ""  # how to install the CLI, for ``check``

    @property
    def command(self) -> str:
        binary = self.binary
        if binary is None:  # only when a subclass forgets default_binary
            raise AdapterError(f"adapter {self.manifest.id!r}: no CLI to run")
        return binary

    def check(self) -> Availability:
        found = super().check()
        if found.path is None and found.reason and self.install_hint:
            found.reason = f"{found.reason} (install it: {self.install_hint})"
        return found

    # How the CLI continues its own session (``resume_argv``): set by the kinds that can.
    def continue_with(self, ctx: LaunchContext, turn: Continuation) -> LaunchContext | None:
        """A CLI resumes its own session (its id from the turn that ended) with the steering
        section alone as the new message, in the same sandbox; None when this kind cannot,
        or the turn never said its session."""
        if self.steer_by is None or not turn.session_id or not self.own_session(turn.session_id):
            return None
        return self._continuation(ctx, turn, turn.message, turn.session_id)

    def own_session(self, session_id: str) -> bool:
        """Whether ``session_id`` (read from the CLI's output, which code the agent runs can
        write to) is a plain id: never an option (``--dangerously-…``) on a command line."""
        return _SESSION_ID.fullmatch(session_id) is not None

    def launch(self, plan: LaunchPlan) -> Session:
        for path in plan.side_files.values():  # a stale file must not pass for this run's
            Path(path).unlink(missing_ok=True)
        session = super().launch(plan)
        if isinstance(session.parser, CliParser):
            session.parser.bind(plan)
        session.parser.meter.configured_model = self.model
        return session

    # --- settings -------------------------------------------------------------------
    def setting(self, key: str) -> str | None:
        """``runtime_config[key]`` as a non-empty string, or None."""
        value = self.runtime_config.get(key)
        if value is None or isinstance(value, bool | dict | list):
            return None
        text = str(value).strip()
        return text or None

    def _config_text(self, key: str) -> str | None:
        value = self.config.get(key)
        text = str(value).strip() if isinstance(value, str | int | float) else ""
        return text or None

    @property
    def model(self) -> str | None:
        return self.setting("model") or self._config_text("default_model")

    @property
    def provider(self) -> str | None:
        return self.setting("provider") or self._config_text("default_provider")

    def switch(self, key: str, default: bool) -> bool:
        value = self.runtime_config.get(key)
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in {"true", "yes", "on", "1"}:
            return True
        if isinstance(value, str) and value.strip().lower() in {"false", "no", "off", "0"}:
            return False
        return default

    def choice(self, key: str, allowed: tuple[str, ...], default: str | None) -> str | None:
        value = self.setting(key)
        if value is None:
            return default
        if value not in allowed:
            raise AdapterError(
                f"adapter {self.manifest.id!r}: runtime_config.{key} is {value!r}, which "
                f"{self.kind} does not accept",
                fix=f"use one of: {', '.join(allowed)}",
            )
        return value
