"""Claude Code: ``claude -p --output-format stream-json --verbose``, one message per line.

Flags checked against ``claude --help`` of 2.1.332 (see ``docs/adapters-research.md``).
There is no ``--cwd``: the process runs in the worktree. ``--verbose`` is required with
stream-json in print mode. An API failure ends with ``subtype: success`` *and*
``is_error: true``: success is read from ``is_error``, never from ``subtype``.
"""

from __future__ import annotations

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

# The choices `claude --help` lists, plus "default" (no longer listed, still accepted).
PERMISSION_MODES = (
    "acceptEdits",
    "auto",
    "bypassPermissions",
    "manual",
    "dontAsk",
    "plan",
    "default",
)
EDIT_TOOLS = frozenset({"Edit", "Write", "NotebookEdit", "MultiEdit"})
_ARGUMENT_KEYS = ("file_path", "notebook_path", "path", "command", "pattern", "url", "query")


class ClaudeParser(JsonLinesParser):
    def __init__(self) -> None:
        super().__init__()
        self.last_assistant_text: str | None = None
        self.result_seen = False
        self.session_model: str | None = None  # the init line's model
        self._edits: dict[str, str] = {}  # tool_use id → path, until its tool_result

    def on_event(self, event: JsonObject) -> list[ObserveEvent]:
        kind = string(event.get("type"))
        if kind == "system":
            return self._system(event)
        if kind == "assistant":
            return self._assistant(event)
        if kind == "user":
            return self._user(event)
        if kind == "result":
            return self._result(event)
        return []  # stream_event (partial messages) and kinds this version does not know

    def _system(self, event: JsonObject) -> list[ObserveEvent]:
        subtype = string(event.get("subtype"))
        if subtype == "init":
            self.session_model = string(event.get("model")) or None
            self.session_id = string(event.get("session_id")) or self.session_id
            model = self.session_model or "?"
            mode = string(event.get("permissionMode")) or "?"
            return [ObserveEvent("status", f"session started (model {model}, {mode})")]
        if subtype == "api_retry":
            attempt = integer(event.get("attempt"))
            most = integer(event.get("max_retries"))
            why = string(event.get("error")) or str(event.get("error_status") or "?")
            return [ObserveEvent("status", clip(f"API retry {attempt}/{most}: {why}"))]
        return []

    def _assistant(self, event: JsonObject) -> list[ObserveEvent]:
        message = obj(event.get("message"))
        events: list[ObserveEvent] = []
        if event.get("error") or event.get("is_api_error_message"):
            # A synthetic message carrying the API error: not something the model said.
            texts = [string(b.get("text")) or "" for b in objects(message.get("content"))]
            detail = " ".join(t for t in texts if t) or str(event.get("error"))
            return [ObserveEvent("blocker", clip(f"API error: {detail}"))]
        for block in objects(message.get("content")):
            block_type = string(block.get("type"))
            if block_type == "text":
                text = string(block.get("text")) or ""
                if text.strip():
                    self.last_assistant_text = text
                events.extend(self.said(text))
            elif block_type == "tool_use":
                name = string(block.get("name")) or "?"
                tool_input = obj(block.get("input"))
                events.append(ObserveEvent("tool_call", clip(self._describe(name, tool_input))))
                path = string(tool_input.get("file_path")) or string(
                    tool_input.get("notebook_path")
                )
                tool_id = string(block.get("id"))
                if name in EDIT_TOOLS and path and tool_id:
                    self._edits[tool_id] = path
        return events

    def _describe(self, name: str, tool_input: JsonObject) -> str:
        for key in _ARGUMENT_KEYS:
            value = string(tool_input.get(key))
            if value:
                shown = self.rel(value) if key.endswith("path") else value
                return f"{name} {shown}" if key.endswith("path") else f"{name}: {shown}"
        description = string(tool_input.get("description"))
        return f"{name}: {description}" if description else name

    def _user(self, event: JsonObject) -> list[ObserveEvent]:
        events: list[ObserveEvent] = []
        for block in objects(obj(event.get("message")).get("content")):
            block_type = string(block.get("type"))
            if block_type == "tool_result":
                tool_id = string(block.get("tool_use_id")) or ""
                path = self._edits.pop(tool_id, None)
                if block.get("is_error") is True:
                    events.append(ObserveEvent("log", clip(f"tool failed: {block.get('content')}")))
                elif path:
                    events.append(ObserveEvent("file_change", self.rel(path)))
            elif block_type == "text":
                text = string(block.get("text")) or ""
                if text.startswith("[Request interrupted"):
                    events.append(ObserveEvent("status", clip(text)))
        return events

    def _result(self, event: JsonObject) -> list[ObserveEvent]:
        self.result_seen = True
        self._usage(event)
        turns = integer(event.get("num_turns"))
        denied = [_denial(denial) for denial in objects(event.get("permission_denials"))]
        self.blockers = [f"permission denied: {what}" for what in denied]  # the session's
        events = [ObserveEvent("blocker", clip(line)) for line in self.blockers]
        text = string(event.get("result"))
        if event.get("is_error") is not True:
            self.error = None
            self.native_final = text
            events.append(ObserveEvent("status", f"finished ({turns} turns)"))
            return events
        subtype = string(event.get("subtype")) or "error"
        reason = string(event.get("terminal_reason"))
        errors = [e for e in event.get("errors") or [] if isinstance(e, str)]
        detail = text or "; ".join(errors) or "no detail"
        head = subtype if subtype != "success" else "error"
        if reason and reason not in head:
            head = f"{head} ({reason})"
        self.error = f"{head}: {detail}"
        self.native_final = None
        events.append(ObserveEvent("blocker", clip(self.error)))
        return events

    def _usage(self, event: JsonObject) -> None:
        """``modelUsage`` (every model, subagents too, each by name) if present, else the
        main loop's, credited to the model the session's init line named."""
        self.meter.clear()  # each result line carries the session's totals
        per_model = obj(event.get("modelUsage"))
        if per_model:
            for name, value in per_model.items():
                usage = obj(value)
                cache_read = integer(usage.get("cacheReadInputTokens"))
                cache_write = integer(usage.get("cacheCreationInputTokens"))
                self.add_usage(
                    integer(usage.get("inputTokens")) + cache_read + cache_write,
                    integer(usage.get("outputTokens")),
                    number(usage.get("costUSD")),
                    cache_read=cache_read,
                    cache_write=cache_write,
                    model=name or None,
                )
            return
        usage = obj(event.get("usage"))
        if usage or "total_cost_usd" in event:
            cache_read = integer(usage.get("cache_read_input_tokens"))
            cache_write = integer(usage.get("cache_creation_input_tokens"))
            self.add_usage(
                integer(usage.get("input_tokens")) + cache_read + cache_write,
                integer(usage.get("output_tokens")),
                number(event.get("total_cost_usd")),
                cache_read=cache_read,
                cache_write=cache_write,
                model=self.session_model,
            )

    def finish(self, plan: LaunchPlan, result: ProcResult) -> None:
        if self.native_final is None and not self.result_seen and self.last_assistant_text:
            self.native_final = self.last_assistant_text  # no result line (killed, crashed)
        if self.native_final and self.native_final.strip() not in (
            part.strip() for part in self.text_parts
        ):
            self.text_parts.append(self.native_final)


class ClaudeAdapter(CliAdapter):
    def home_paths(self) -> list[Path]:
        return [Path.home() / ".claude", Path.home() / ".claude.json"]

    kind = "claude"
    default_binary = "claude"
    steer_by = (
        "continued in its own session (claude --resume) in the same sandbox when its turn ended"
    )
    install_hint = "npm install -g @anthropic-ai/claude-code@2.1.332"
    # SIGINT makes it write "[Request interrupted by user]" and a result line (exit 0);
    # SIGTERM exits 143 with nothing more.
    cancel_signals: ClassVar[tuple[signal.Signals, ...]] = (signal.SIGINT, signal.SIGTERM)

    def build(self, ctx: LaunchContext) -> tuple[list[str], dict[str, str], Path | None]:
        mode = self.choice("permission_mode", PERMISSION_MODES, "acceptEdits")
        argv = [
            self.command,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-mode",
            str(mode),
        ]
        allowed = self.allowed_tools(ctx)
        if allowed:
            argv += ["--allowedTools", *allowed]
        if self.model:
            argv += ["--model", self.model]
        if ctx.resume_id is not None:  # steering: its session continued (in the worktree: cwd)
            argv += ["--resume", ctx.resume_id]
        return argv, {}, ctx.prompt_file

    def allowed_tools(self, ctx: LaunchContext) -> list[str]:
        """``runtime_config.allowed_tools`` (a list; ``[]`` grants nothing more), else exactly
        the mission's own check commands as ``Bash(<command>)``: in ``-p`` mode claude asks
        before any Bash command, and with nobody to answer, the checks the prompt tells it to
        run would all be denied. Nothing wider is granted."""
        configured = self.runtime_config.get("allowed_tools")
        if configured is not None:
            if not isinstance(configured, list) or not all(isinstance(t, str) for t in configured):
                raise AdapterError(
                    f"adapter {self.manifest.id!r}: runtime_config.allowed_tools is {configured!r}",
                    fix="give a list of claude tool rules, e.g. ['Bash(npm test)', 'Edit']",
                )
            return list(configured)
        mission = ctx.mission
        commands: list[str] = [c.check_command or "" for c in mission.acceptance_criteria]
        commands += [check.command or "" for check in mission.verification.required_checks]
        wanted = dict.fromkeys(command.strip() for command in commands)
        return [f"Bash({command})" for command in wanted if command]

    def parser(self) -> OutputParser:
        return ClaudeParser()


def _denial(denial: JsonObject) -> str:
    """``Bash: rm -rf x`` — the tool and, where it has one, the command or file it wanted."""
    name = string(denial.get("tool_name")) or "?"
    args = obj(denial.get("tool_input"))
    detail = string(args.get("command")) or string(args.get("file_path")) or ""
    return f"{name}: {clip(detail, 200)}" if detail else name
