"""aider: ``aider --message-file P --yes-always …``; plain-text stdout, JSONL analytics log.

Flags checked against ``aider --help`` of 0.86.2 (see ``docs/adapters-research.md``).
``--yes`` is not an aider flag (argparse expands the prefix): ``--yes-always`` is built.
Everything aider would write into the worktree is moved or turned off so it never lands
in the diff: history files go to the artifacts dir, no ``.gitignore`` edit, no commits,
and no repo-map cache (``--map-tokens 0`` unless ``runtime_config.map_tokens`` is set).
aider exits 0 on an API error (printed on stdout as ``litellm.…Error``), so failure is
read from the output and the analytics log, not from the exit code.
"""

from __future__ import annotations

import re
import signal
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from uh_core.adapters.base import (
    Continuation,
    LaunchContext,
    LaunchPlan,
    ObserveEvent,
    OutputParser,
)
from uh_core.adapters.jsonl import (
    CliAdapter,
    CliParser,
    clip,
    integer,
    number,
    obj,
    read_json_lines,
    read_text,
    string,
)
from uh_core.errors import AdapterError
from uh_core.proc import ProcResult

ANALYTICS = "aider-analytics.jsonl"
CHAT_HISTORY = "aider.chat.md"
INPUT_HISTORY = "aider.input.history"
LLM_HISTORY = "aider.llm.log"

_BANNER = re.compile(
    r"^(Aider v\S+|(Main model|Model|Weak model|Editor model|Git repo|Repo-map|Added .+ to "
    r"the chat|Cost estimates|Warning|Note):?.*)$"
)
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
_TOKENS = re.compile(r"^Tokens: .+ sent, .+ received")
_API_ERROR = re.compile(r"^litellm\.\w+:")
# after an error it retries (a rate limit, an overloaded server) aider says so and waits
_RETRYING = re.compile(r"^Retrying in \d+(?:\.\d+)? seconds")
_NOTICE = re.compile(r"^(Tokens: .+ sent|Applied edit to |Commit [0-9a-f]+ |You can skip this)")
# The reply could not be applied: aider asks the model again ("reflects"), up to a limit.
_MALFORMED = re.compile(
    r"^(The LLM did not conform to the edit format\.|No filename provided before .+ in file "
    r"listing|\S+ SearchReplaceNoExactMatch)"
)
_GAVE_UP = re.compile(r"^Only \d+ reflections allowed, stopping\.")
# The edit format uh asks for unless the manifest says otherwise: for a model aider does not
# know it would pick "whole", where every fenced block is a file, so the final-message block
# the prompt asks for is taken for a file without a name and the whole reply is rejected.
DEFAULT_EDIT_FORMAT = "diff"


class AiderParser(CliParser):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []  # stdout as followed (blank lines are not handed out)
        self.unapplied: str | None = None  # the last reply not applied (unless a later one was)
        self.gave_up: str | None = None  # "Only N reflections allowed, stopping."

    def feed(self, line: bytes) -> list[ObserveEvent]:
        text = line.decode("utf-8", "replace").rstrip("\r")
        self.lines.append(text)
        if (applied := _APPLIED.match(text)) is not None:
            self.unapplied = None  # a later reply was applied
            return [ObserveEvent("file_change", self.rel(applied.group(1)))]
        if _MALFORMED.match(text):
            self.unapplied = text.strip()
            return [ObserveEvent("blocker", clip(text))]
        if _GAVE_UP.match(text):
            self.gave_up = text.strip()
            return [ObserveEvent("blocker", clip(text))]
        if _API_ERROR.match(text):
            self.error = self.error or text.strip()
            return [ObserveEvent("blocker", clip(text))]
        if _TOKENS.match(text) or _BANNER.match(text):
            return [ObserveEvent("status", clip(text))]
        return [ObserveEvent("log", clip(text))] if text.strip() else []

    def finish(self, plan: LaunchPlan, result: ProcResult) -> None:
        if "--chat-history-file" in plan.argv:  # its session: the chat a resume restores
            chat = Path(plan.argv[plan.argv.index("--chat-history-file") + 1])
            self.session_id = str(chat) if chat.is_file() else self.session_id
        stdout = read_text(plan.stdout_log)
        lines = stdout.splitlines() if stdout is not None else self.lines
        if stdout is not None:  # the whole log, in case the follower missed the last lines
            for line in lines:
                if _GAVE_UP.match(line):
                    self.gave_up = self.gave_up or line.strip()
        reply, error = split_stdout(lines)
        self.error = error  # an error aider retried past is not the run's
        if self.error is None and (self.gave_up or self.unapplied):
            why = self.gave_up or self.unapplied
            self.error = f"aider could not apply the model's reply ({why}); nothing was applied"
        history = read_text(self.session_id or plan.side_files.get("chat_history", ""))
        exact = last_reply(history) if history else None
        # The chat history holds the reply as the model sent it; stdout wraps it at 80 columns.
        if exact:
            self.text_parts = [exact]
        elif reply.strip():
            self.text_parts = [reply]
        analytics = read_json_lines(plan.side_files.get("analytics", ""))
        sends = [obj(e.get("properties")) for e in analytics if e.get("event") == "message_send"]
        for props in sends:  # prompt_tokens includes what the provider read from its cache
            self.add_usage(
                integer(props.get("prompt_tokens")),
                integer(props.get("completion_tokens")),
                number(props.get("cost")),
                model=string(props.get("main_model")) or None,  # litellm's provider/model
            )
        started = sum(1 for e in analytics if e.get("event") == "message_send_starting")
        if self.error is None and started and not sends:
            self.error = "aider sent the prompt but no model reply came back"
        if self.error is None:
            self.native_final = exact or reply.strip() or None


def split_stdout(lines: list[str]) -> tuple[str, str | None]:
    """(the model's reply as printed, the API error that ended the run if one was printed:
    not one aider retried, as it does for a rate limit, about a minute, before giving up)."""
    # The banner: from "Aider v…" (start-up warnings may come first) to the next blank line.
    banner = next((i for i, line in enumerate(lines[:40]) if line.startswith("Aider v")), None)
    index = 0
    if banner is not None:
        index = banner
        while index < len(lines) and lines[index].strip():
            index += 1
    reply: list[str] = []
    error: str | None = None
    while index < len(lines):
        line = lines[index].rstrip("\r")
        index += 1
        if _API_ERROR.match(line):
            paragraph, index, retried = _error_paragraph(lines, index - 1)
            if not retried:
                error = error or clip(" ".join(paragraph), 500)
            continue
        if _NOTICE.match(line):
            continue
        reply.append(line)
    return "\n".join(reply).strip("\n"), error


def _error_paragraph(lines: list[str], start: int) -> tuple[list[str], int, bool]:
    """The error paragraph at ``start`` (rich wraps it at 80 columns), the index after it, and
    whether aider retried after it (its "Retrying in N seconds..." line, not kept)."""
    paragraph = [lines[start].strip()]
    index = start + 1
    while index < len(lines) and lines[index].strip():
        if _RETRYING.match(lines[index]):
            return paragraph, index + 1, True
        paragraph.append(lines[index].strip())
        index += 1
    return paragraph, index, False


def last_reply(history: str) -> str | None:
    """The assistant's text after the last user message (``#### …``) of a chat history."""
    lines = history.splitlines()
    last_user = max((i for i, line in enumerate(lines) if line.startswith("####")), default=-1)
    if last_user < 0:
        return None
    kept = [
        line
        for line in lines[last_user + 1 :]
        if not line.startswith("####") and not line.startswith(">")
    ]
    text = "\n".join(kept).strip()
    return text or None


class AiderAdapter(CliAdapter):
    def home_paths(self) -> list[Path]:
        return [Path.home() / ".aider", Path.home() / ".cache"]

    kind = "aider"
    default_binary = "aider"
    steer_by = (
        "continued from its chat history (aider --restore-chat-history) in the same sandbox "
        "when its turn ended"
    )
    install_hint = "pip install aider-chat==0.86.2 (in its own venv)"
    # SIGINT does not interrupt a pending model request; SIGTERM exits 143 at once.
    cancel_signals: ClassVar[tuple[signal.Signals, ...]] = (signal.SIGTERM,)

    def build(self, ctx: LaunchContext) -> tuple[list[str], dict[str, str], Path | None]:
        side = self.side_files(ctx)
        map_tokens = self.setting("map_tokens") or "0"
        if not map_tokens.isdigit():
            raise AdapterError(
                f"adapter {self.manifest.id!r}: runtime_config.map_tokens is {map_tokens!r}",
                fix="use a whole number of tokens (0 turns the repo map off)",
            )
        argv = [
            self.command,
            "--message-file",
            str(ctx.prompt_file),
            "--yes-always",
            "--no-auto-commits",
            "--no-dirty-commits",
            "--no-gitignore",
            "--no-check-update",
            "--no-analytics",
            "--analytics-log",
            side["analytics"],
            "--no-show-model-warnings",
            "--no-pretty",
            "--no-stream",
            "--no-fancy-input",
            "--chat-history-file",
            ctx.resume_id or side["chat_history"],
            "--input-history-file",
            side["input_history"],
            "--llm-history-file",
            side["llm_history"],
            "--map-tokens",
            map_tokens,
        ]
        model = self.model
        if model and self.provider and "/" not in model:
            model = f"{self.provider}/{model}"  # litellm's provider/model
        if model:
            argv += ["--model", model]
        argv += ["--edit-format", self.setting("edit_format") or DEFAULT_EDIT_FORMAT]
        argv += [f"--file={rel}" for rel in self._chat_files(ctx)]
        if ctx.resume_id is not None:  # steering: the round's chat so far, then the message
            argv.append("--restore-chat-history")
        return argv, {}, None

    def continue_with(self, ctx: LaunchContext, turn: Continuation) -> LaunchContext | None:
        """aider's session is its chat history file (the first turn's): restored, and
        written on, from that folder."""
        follow = super().continue_with(ctx, turn)
        if follow is None or turn.session_id is None:
            return follow
        return replace(follow, sessions=Path(turn.session_id).parent)

    def own_session(self, session_id: str) -> bool:
        """Its session is the chat history file uh named on its command line (an absolute
        path it set itself), never something read from the output."""
        return session_id.endswith(CHAT_HISTORY) and Path(session_id).is_absolute()

    @staticmethod
    def _chat_files(ctx: LaunchContext) -> list[str]:
        """The mission's expected outputs that exist in the worktree (aider would create
        the others empty), added to the chat so aider edits them without a repo map."""
        root = (ctx.files_root or ctx.worktree).resolve()
        found: list[str] = []
        for rel in ctx.mission.expected_files():
            if any(ch in rel for ch in "*?[") or rel in found:
                continue
            path = (root / rel).resolve()
            if path.is_relative_to(root) and path.is_file():
                found.append(rel)
        return found

    def side_files(self, ctx: LaunchContext) -> dict[str, str]:
        folder = ctx.artifacts_dir
        files = {
            "analytics": str(folder / ANALYTICS),
            "chat_history": str(folder / CHAT_HISTORY),
            "input_history": str(folder / INPUT_HISTORY),
            "llm_history": str(folder / LLM_HISTORY),
        }
        if ctx.resume_id is not None:  # the round's chat, restored: never removed as stale
            del files["chat_history"]
        return files

    def parser(self) -> OutputParser:
        return AiderParser()
