"""pi and oh-my-pi (``omp``): ``--mode json``, a session header then one event per line.

Flags checked against ``pi --help`` of 0.73.1 and ``omp --help`` of 18.2.3 (see
``docs/adapters-research.md``). Both read the prompt from piped stdin. pi in JSON mode
exits 0 even when the model call failed, so failure is read from the last assistant
message's ``stopReason``; omp exits 1 then, but is read the same way.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import ClassVar

from uh_core.adapters.base import LaunchContext, LaunchPlan, ObserveEvent, OutputParser
from uh_core.adapters.jsonl import (
    CliAdapter,
    JsonLinesParser,
    JsonObject,
    clip,
    integer,
    number,
    obj,
    objects,
    string,
)
from uh_core.errors import AdapterError
from uh_core.proc import ProcResult

PI_THINKING = ("off", "minimal", "low", "medium", "high", "xhigh")
OMP_THINKING = (*PI_THINKING, "max", "auto")
EDIT_TOOLS = frozenset({"write", "edit", "multiedit", "apply_patch"})
FAILED_STOPS = frozenset({"error", "aborted"})
_STREAMING = b'{"type":"message_update"'


class PiParser(JsonLinesParser):
    def __init__(self) -> None:
        super().__init__()
        self.turns = 0
        self.stop_reason: str | None = None  # of the last assistant message
        self._edits: dict[str, str] = {}  # toolCallId → path, until the tool ends

    def feed(self, line: bytes) -> list[ObserveEvent]:
        if line.startswith(_STREAMING):
            return []  # each repeats the whole partial message: most of the bytes, no news
        return super().feed(line)

    def on_event(self, event: JsonObject) -> list[ObserveEvent]:
        kind = string(event.get("type"))
        if kind == "session":
            self.session_id = string(event.get("id")) or self.session_id
            return [ObserveEvent("status", f"session started ({event.get('id') or '?'})")]
        if kind == "agent_start":
            return [ObserveEvent("status", "agent started")]
        if kind == "agent_end":
            return [ObserveEvent("status", "agent ended")]
        if kind == "turn_start":
            self.turns += 1
            return [ObserveEvent("status", f"turn {self.turns} started")]
        if kind == "turn_end":
            stop = string(obj(event.get("message")).get("stopReason")) or "?"
            return [ObserveEvent("status", f"turn {self.turns} ended ({stop})")]
        if kind == "message_end":
            message = obj(event.get("message"))
            if message.get("role") == "assistant":
                return self._assistant(message)
            return []  # the user's prompt and tool results: not the model's words
        if kind == "tool_execution_start":
            return self._tool_start(event)
        if kind == "tool_execution_end":
            return self._tool_end(event)
        if kind == "auto_retry_start":
            attempt = integer(event.get("attempt"))
            most = integer(event.get("maxAttempts"))
            why = string(event.get("errorMessage")) or "?"
            return [ObserveEvent("status", clip(f"retry {attempt}/{most} after: {why}"))]
        if kind == "auto_retry_end":
            if event.get("success") is True:
                return [ObserveEvent("status", "retry succeeded")]
            self.error = string(event.get("finalError")) or "retries exhausted"
            return [ObserveEvent("blocker", clip(f"retries exhausted: {self.error}"))]
        if kind == "notice":  # omp
            text = clip(f"{event.get('level') or 'notice'}: {event.get('message') or ''}")
            return [ObserveEvent("blocker" if event.get("level") == "error" else "log", text)]
        return []  # message_start/update (streaming), queue_update, compaction_*, …

    def _assistant(self, message: JsonObject) -> list[ObserveEvent]:
        usage = obj(message.get("usage"))
        if usage:  # per model call: `input` excludes cached tokens
            cache_read, cache_write = (
                integer(usage.get("cacheRead")),
                integer(usage.get("cacheWrite")),
            )
            self.add_usage(
                integer(usage.get("input")) + cache_read + cache_write,
                integer(usage.get("output")),
                number(obj(usage.get("cost")).get("total")),
                cache_read=cache_read,
                cache_write=cache_write,
                model=string(message.get("model")) or None,
            )
        texts = [
            string(block.get("text")) or ""
            for block in objects(message.get("content"))
            if block.get("type") == "text"
        ]
        text = "".join(texts)
        events = self.said(text)
        if text.strip():
            self.native_final = text
        self.stop_reason = string(message.get("stopReason"))
        if self.stop_reason in FAILED_STOPS:
            self.error = string(message.get("errorMessage")) or f"stopReason {self.stop_reason}"
            events.append(ObserveEvent("blocker", clip(f"{self.stop_reason}: {self.error}")))
        else:
            self.error = None  # a retry that worked clears the earlier failure
        return events

    def _tool_start(self, event: JsonObject) -> list[ObserveEvent]:
        name = string(event.get("toolName")) or "?"
        args = obj(event.get("args"))
        path = string(args.get("path")) or string(args.get("file_path"))
        call_id = string(event.get("toolCallId"))
        if name in EDIT_TOOLS and path and call_id:
            self._edits[call_id] = path
        command = string(args.get("command"))
        if command:
            shown = f"{name}: {command}"
        elif path:
            shown = f"{name} {self.rel(path)}"
        else:
            first = next((v for v in args.values() if isinstance(v, str)), "")
            shown = f"{name} {first}".strip()
        return [ObserveEvent("tool_call", clip(shown))]

    def _tool_end(self, event: JsonObject) -> list[ObserveEvent]:
        path = self._edits.pop(string(event.get("toolCallId")) or "", None)
        if event.get("isError") is True:
            name = string(event.get("toolName")) or "?"
            texts = [
                string(block.get("text")) or ""
                for block in objects(obj(event.get("result")).get("content"))
            ]
            return [ObserveEvent("log", clip(f"{name} failed: {' '.join(texts)}"))]
        return [ObserveEvent("file_change", self.rel(path))] if path else []

    def finish(self, plan: LaunchPlan, result: ProcResult) -> None:
        if self.error is not None:
            self.native_final = None  # an earlier reply is not the answer of a failed run


class PiAdapter(CliAdapter):
    def home_paths(self) -> list[Path]:
        return [Path(os.environ.get("PI_CODING_AGENT_DIR") or Path.home() / ".pi")]

    kind = "pi"
    default_binary = "pi"
    steer_by = (
        "continued in its own session (pi --session, kept in the round's folder) in the same "
        "sandbox when its turn ended"
    )
    install_hint = "npm install -g @mariozechner/pi-coding-agent@0.73.1"
    # SIGTERM makes pi dispose of its session and exit 143; SIGINT is not handled (130).
    cancel_signals: ClassVar[tuple[signal.Signals, ...]] = (signal.SIGTERM,)
    thinking_levels: ClassVar[tuple[str, ...]] = PI_THINKING

    def _check_mode(self) -> None:
        mode = self.setting("mode")
        if mode is not None and mode != "json":
            raise AdapterError(
                f"adapter {self.manifest.id!r}: runtime_config.mode is {mode!r}; uh reads "
                f"{self.kind}'s JSON event stream only",
                fix="set runtime_config.mode to json or remove it",
            )

    def _resource_flags(self) -> list[str]:
        flags: list[str] = []
        if not self.switch("allow_extensions", False):
            flags.append("--no-extensions")
        if not self.switch("allow_skills", False):
            flags.append("--no-skills")
        return flags

    def build(self, ctx: LaunchContext) -> tuple[list[str], dict[str, str], Path | None]:
        self._check_mode()
        # its session is kept in the round's folder (not the operator's ~/.pi): a steering
        # message continues it there
        argv = [self.command, "--mode", "json", "--session-dir", str(ctx.session_dir)]
        if ctx.resume_id is not None:
            argv += ["--session", ctx.resume_id]
        if self.provider:
            argv += ["--provider", self.provider]
        if self.model:
            argv += ["--model", self.model]
        thinking = self.choice("thinking", self.thinking_levels, None)
        if thinking:
            argv += ["--thinking", thinking]
        argv += [*self._resource_flags(), "--no-prompt-templates", "--no-themes"]
        return argv, {}, ctx.prompt_file

    def parser(self) -> OutputParser:
        return PiParser()


class OhMyPiAdapter(PiAdapter):
    kind = "oh-my-pi"
    default_binary = "omp"
    steer_by = (
        "continued in its own session (omp --resume, kept in the round's folder) in the same "
        "sandbox when its turn ended"
    )
    install_hint = "npm install -g bun @oh-my-pi/pi-coding-agent@18.2.3 (needs Bun)"
    # SIGINT makes omp end the turn with stopReason "aborted" (exit 130); SIGTERM: 143.
    cancel_signals: ClassVar[tuple[signal.Signals, ...]] = (signal.SIGINT, signal.SIGTERM)
    thinking_levels: ClassVar[tuple[str, ...]] = OMP_THINKING

    def home_paths(self) -> list[Path]:
        # omp keeps its models.yml, settings and caches in ~/.omp (pi's PI_CODING_AGENT_DIR
        # overrides it too); a granted ~/.pi would leave omp without its own configuration.
        return [Path(os.environ.get("PI_CODING_AGENT_DIR") or Path.home() / ".omp")]

    def build(self, ctx: LaunchContext) -> tuple[list[str], dict[str, str], Path | None]:
        self._check_mode()
        argv = [
            self.command,
            "--print",
            "--mode",
            "json",
            "--session-dir",
            str(ctx.session_dir),
            "--cwd",
            str(ctx.worktree),
        ]
        if ctx.resume_id is not None:
            argv += ["--resume", ctx.resume_id]
        model = self.model
        if model and self.provider and "/" not in model:
            model = f"{self.provider}/{model}"  # omp prefers provider/id over --provider
        if model:
            argv += ["--model", model]
        elif self.provider:
            argv += ["--provider", self.provider]
        thinking = self.choice("thinking", self.thinking_levels, None)
        if thinking:
            argv += ["--thinking", thinking]
        argv += [
            *self._resource_flags(),
            "--no-rules",
            "--no-title",
            "--approval-mode",
            "yolo",  # omp's documented default, passed so user settings cannot change it
        ]
        return argv, {}, ctx.prompt_file
