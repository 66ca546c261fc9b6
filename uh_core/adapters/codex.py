"""OpenAI Codex CLI: ``codex exec --json``, one ``ThreadEvent`` per stdout line.

Flags checked against ``codex exec --help`` of codex-cli 0.171.0 (see
``docs/adapters-research.md``). ``-a/--ask-for-approval`` and ``--full-auto`` are rejected
by ``codex exec`` in that version: the approval policy goes through ``-c``. The prompt is
read from stdin (``-``), which has no argv length limit.
"""

from __future__ import annotations

import os
import re
import shlex
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
    obj,
    objects,
    read_text,
    string,
)
from uh_core.proc import ProcResult

SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
APPROVAL_POLICIES = ("on-request", "never")  # the values `codex --help` lists in 0.171.0
LAST_MESSAGE = "codex-last-message.txt"
_SHELL_WRAPPER = re.compile(r"^(?:/usr)?/bin/(?:ba|z)?sh -l?c (.+)$", re.DOTALL)


def short_command(command: str) -> str:
    """``/bin/bash -lc 'cat a.txt'`` → ``cat a.txt`` (codex wraps every command)."""
    wrapped = _SHELL_WRAPPER.match(command)
    if wrapped:
        try:
            parts = shlex.split(wrapped.group(1))
        except ValueError:
            parts = []
        if len(parts) == 1:
            return parts[0]
    return command


class CodexParser(JsonLinesParser):
    def __init__(self) -> None:
        super().__init__()
        self.last_agent_message: str | None = None
        self.last_error: str | None = None  # top-level `error`: often a transient notice
        self.turn_completed = False
        self.turn_failed = False
        self._started: set[str] = set()  # command items already reported

    def on_event(self, event: JsonObject) -> list[ObserveEvent]:
        kind = string(event.get("type"))
        if kind == "thread.started":
            thread = string(event.get("thread_id")) or "?"
            self.session_id = string(event.get("thread_id")) or self.session_id
            return [ObserveEvent("status", f"thread started ({thread})")]
        if kind == "turn.started":
            return [ObserveEvent("status", "turn started")]
        if kind == "turn.completed":
            self.turn_completed = True
            self.error = None
            usage = obj(event.get("usage"))
            # input_tokens already includes cached_input_tokens; the model is the one the
            # manifest configures (codex's JSON names none).
            self.add_usage(
                integer(usage.get("input_tokens")),
                integer(usage.get("output_tokens")),
                None,
                cache_read=integer(usage.get("cached_input_tokens")),
                cache_write=integer(usage.get("cache_write_input_tokens")),
            )
            return [ObserveEvent("status", "turn completed")]
        if kind == "turn.failed":
            self.turn_failed = True
            message = string(obj(event.get("error")).get("message")) or "turn failed"
            repeated = message == self.last_error
            self.error = message
            return [] if repeated else [ObserveEvent("blocker", clip(f"turn failed: {message}"))]
        if kind == "error":
            message = string(event.get("message")) or "error"
            self.last_error = message
            return [ObserveEvent("blocker", clip(message))]
        if kind in {"item.started", "item.updated", "item.completed"}:
            return self._item(kind, obj(event.get("item")))
        return []

    def _item(self, kind: str, item: JsonObject) -> list[ObserveEvent]:
        item_type = string(item.get("type"))
        item_id = string(item.get("id")) or ""
        done = kind == "item.completed"
        if item_type == "command_execution":
            command = short_command(string(item.get("command")) or "")
            events: list[ObserveEvent] = []
            if item_id not in self._started:
                self._started.add(item_id)
                events.append(ObserveEvent("tool_call", clip(f"$ {command}")))
            code = item.get("exit_code")
            if done and isinstance(code, int) and code != 0:
                events.append(ObserveEvent("log", clip(f"exit {code}: {command}")))
            return events
        if item_type == "file_change":
            if not done or string(item.get("status")) == "failed":
                return []
            return [
                ObserveEvent("file_change", self.rel(path))
                for change in objects(item.get("changes"))
                if (path := string(change.get("path")))
            ]
        if item_type == "agent_message" and done:
            text = string(item.get("text")) or ""
            if text.strip():
                self.last_agent_message = text
            return self.said(text)
        if item_type == "mcp_tool_call" and item_id not in self._started:
            self._started.add(item_id)
            server = string(item.get("server")) or "mcp"
            tool = string(item.get("tool")) or "?"
            return [ObserveEvent("tool_call", clip(f"{server}.{tool}"))]
        if item_type == "web_search" and item_id not in self._started:
            self._started.add(item_id)
            return [ObserveEvent("tool_call", clip(f"web search: {item.get('query') or ''}"))]
        if item_type == "error" and done:  # non-fatal by definition
            return [ObserveEvent("log", clip(f"error: {item.get('message') or ''}"))]
        return []

    def finish(self, plan: LaunchPlan, result: ProcResult) -> None:
        path = plan.side_files.get("last_message")
        last = read_text(path) if path else None
        if last and last.strip():
            self.native_final = last
            if last.strip() != (self.last_agent_message or "").strip():
                self.text_parts.append(last)  # stdout lost it: still extract from it
        elif self.last_agent_message is not None:
            self.native_final = self.last_agent_message
        if self.error is None and not self.turn_completed and self.last_error is not None:
            self.error = self.last_error  # ended (or was stopped) without finishing the turn


class CodexAdapter(CliAdapter):
    def home_paths(self) -> list[Path]:
        return [Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")]

    kind = "codex"
    default_binary = "codex"
    steer_by = (
        "continued in its own session (codex exec resume) in the same sandbox when its turn ended"
    )
    install_hint = "npm install -g @openai/codex@0.171.0"
    # SIGINT and SIGTERM both stop it at once (exit 1 / 143); neither writes a closing event.
    cancel_signals: ClassVar[tuple[signal.Signals, ...]] = (signal.SIGINT, signal.SIGTERM)

    def build(self, ctx: LaunchContext) -> tuple[list[str], dict[str, str], Path | None]:
        # codex's own sandbox cannot start inside uh's bwrap (every write it allows fails):
        # there, uh's sandbox confines it and codex runs with its own turned off.
        inner = "danger-full-access" if ctx.isolation == "bwrap" else "workspace-write"
        sandbox = self.choice("sandbox_mode", SANDBOX_MODES, inner)
        approval = self.choice("approval_policy", APPROVAL_POLICIES, "never")
        if ctx.resume_id is not None:  # steering: its session continued (in the worktree: cwd)
            argv = [
                self.command, "exec", "resume", ctx.resume_id, "--json",
                "--skip-git-repo-check", "-o", self.side_files(ctx)["last_message"],
                "-c", f'approval_policy="{approval}"', "-c", f'sandbox_mode="{sandbox}"',
            ]  # fmt: skip
            if self.model:
                argv += ["-m", self.model]
            if self.provider:
                argv += ["-c", f'model_provider="{self.provider}"']
            return [*argv, "-"], {}, ctx.prompt_file
        argv = [
            self.command,
            "exec",
            "--json",
            "--cd",
            str(ctx.worktree),
            "--sandbox",
            str(sandbox),
            "--skip-git-repo-check",
            "-o",
            self.side_files(ctx)["last_message"],
            "-c",
            f'approval_policy="{approval}"',
        ]
        if self.model:
            argv += ["-m", self.model]
        if self.provider:
            argv += ["-c", f'model_provider="{self.provider}"']
        argv.append("-")  # the prompt: stdin
        return argv, {}, ctx.prompt_file

    def side_files(self, ctx: LaunchContext) -> dict[str, str]:
        return {"last_message": str(ctx.artifacts_dir / LAST_MESSAGE)}

    def parser(self) -> OutputParser:
        return CodexParser()
