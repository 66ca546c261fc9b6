"""Hermes Agent: ``hermes -z "<prompt>" --usage-file F``; stdout is the final response.

Flags checked against ``hermes --help`` of 0.19.0 (see ``docs/adapters-research.md``).
One-shot mode prints only the final response (no tool previews: there is no live
structured output outside ``hermes acp``), takes the prompt only as one argv string
(capped at 128 KiB by Linux) and exits 0 on an API error, printing the error as the
response: the outcome is read from the usage file's ``failed``/``completed``.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import ClassVar

from uh_core.adapters.base import LaunchContext, LaunchPlan, ObserveEvent, OutputParser
from uh_core.adapters.jsonl import (
    LOG_LIMIT,
    CliAdapter,
    CliParser,
    clip,
    integer,
    number,
    read_json,
    read_text,
    string,
)
from uh_core.errors import AdapterError
from uh_core.proc import ProcResult
from uh_core.runtime.prompt import mission_prompt

USAGE_FILE = "hermes-usage.json"
ARG_MAX_BYTES = 128 * 1024  # Linux MAX_ARG_STRLEN: one argv string, its NUL included


class HermesParser(CliParser):
    def feed(self, line: bytes) -> list[ObserveEvent]:
        text = line.decode("utf-8", "replace").rstrip("\r")
        return [ObserveEvent("log", clip(text, LOG_LIMIT))] if text.strip() else []

    def finish(self, plan: LaunchPlan, result: ProcResult) -> None:
        stdout = (read_text(plan.stdout_log) or "").replace("\r\n", "\n")
        if stdout.strip():
            self.text_parts = [stdout]
        report = read_json(plan.side_files.get("usage", ""))
        if report is not None:
            self._usage(report)
            if report.get("failed") is True or report.get("completed") is False:
                failure = string(report.get("failure"))
                said = stdout.strip().splitlines()[0] if stdout.strip() else ""
                how = "failed" if report.get("failed") is True else "did not complete"
                self.error = clip(f"hermes {how}: {failure or said or 'no detail'}", 500)
        if self.error is None and stdout.strip():
            self.native_final = stdout.strip()

    def _usage(self, report: dict[str, object]) -> None:
        keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
        if all(report.get(key) is None for key in keys):
            return  # a failed run reports nulls: nothing was counted
        cost = number(report.get("estimated_cost_usd"))
        if report.get("cost_status") in (None, "unknown"):
            cost = None  # 0.0 with an unknown price is not a cost
        cache_read = integer(report.get("cache_read_tokens"))
        cache_write = integer(report.get("cache_write_tokens"))
        self.add_usage(
            integer(report.get("input_tokens")) + cache_read + cache_write,  # non-cached + cached
            integer(report.get("output_tokens")),
            cost,
            cache_read=cache_read,
            cache_write=cache_write,
            model=string(report.get("model")) or None,
        )


class HermesAdapter(CliAdapter):
    def home_paths(self) -> list[Path]:
        return [Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes")]

    kind = "hermes"
    default_binary = "hermes"
    install_hint = "pip install hermes-agent==0.19.0 (in its own venv)"
    # SIGINT does not interrupt a pending model request; SIGTERM exits 143 at once
    # (and writes no usage file).
    cancel_signals: ClassVar[tuple[signal.Signals, ...]] = (signal.SIGTERM,)

    def build(self, ctx: LaunchContext) -> tuple[list[str], dict[str, str], Path | None]:
        argv = [
            self.command,
            "-z",
            self._prompt_text(ctx),
            "--usage-file",
            self.side_files(ctx)["usage"],
        ]
        if self.model:
            argv += ["-m", self.model]
        if self.provider:
            argv += ["--provider", self.provider]
        toolsets = self.toolsets()
        if toolsets:
            argv += ["-t", ",".join(toolsets)]
        if self.config.get("pass_session_id") is True:
            argv.append("--pass-session-id")
        return argv, {}, None

    def toolsets(self) -> list[str]:
        """``runtime_config.toolsets`` or ``config.default_toolsets`` (list or "a,b")."""
        raw = self.runtime_config.get("toolsets") or self.config.get("default_toolsets")
        items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list) else []
        names = [str(item).strip() for item in items if str(item).strip()]
        return list(dict.fromkeys(names))

    def _prompt_text(self, ctx: LaunchContext) -> str:
        """The prompt file's text. A dry run prepares before the file exists: then the
        prompt ``mission run`` would write there (same text, so the same plan)."""
        try:
            data = ctx.prompt_file.read_bytes()
        except FileNotFoundError:
            data = mission_prompt(ctx.mission).encode("utf-8")
        except OSError as exc:
            raise AdapterError(
                f"adapter {self.manifest.id!r}: cannot read the prompt {ctx.prompt_file}: "
                f"{exc.strerror}; hermes takes the prompt text itself on its command line",
                fix="check the permissions of the mission's log folder",
            ) from None
        if len(data) + 1 > ARG_MAX_BYTES:
            raise AdapterError(
                f"adapter {self.manifest.id!r}: the prompt is {len(data)} bytes, but hermes "
                f"takes it only as one command-line argument, which Linux caps at 128 KiB",
                fix="shorten the mission (objective, read_first, criteria) or use a runtime "
                "that reads the prompt from a file or stdin",
            )
        if b"\0" in data:
            raise AdapterError(
                f"adapter {self.manifest.id!r}: the prompt contains a NUL byte, which cannot "
                "be passed on a command line",
                fix="remove the NUL byte from the mission text",
            )
        return data.decode("utf-8", "surrogateescape")

    def side_files(self, ctx: LaunchContext) -> dict[str, str]:
        return {"usage": str(ctx.artifacts_dir / USAGE_FILE)}

    def parser(self) -> OutputParser:
        return HermesParser()
