"""The two kinds that need no agent (contract §5): ``script`` and ``command``."""

from __future__ import annotations

import shlex
from pathlib import Path

from uh_core.adapters.base import Adapter, LaunchContext
from uh_core.errors import AdapterError

PROMPT_PLACEHOLDER = "{prompt_file}"


def substitute_prompt(template: str, prompt_file: Path) -> str:
    """``template`` with every ``{prompt_file}`` replaced by the shell-quoted path."""
    if PROMPT_PLACEHOLDER not in template:
        raise AdapterError(
            f"agent command {template!r} has no {PROMPT_PLACEHOLDER} placeholder: "
            "the agent would never see the prompt",
            fix=f"put {PROMPT_PLACEHOLDER} where the prompt file's path goes",
        )
    return template.replace(PROMPT_PLACEHOLDER, shlex.quote(str(prompt_file)))


# A script or command agent is steered by running it again where it left off.
RERUN = (
    "ran again in the same sandbox when its turn ended, the message appended to its prompt "
    "file (UH_STEERING names it)"
)


class ScriptAdapter(Adapter):
    """``config.script``: a shell command run with ``sh -c`` in the worktree; stdout is
    the model output; exit 0 = completed."""

    kind = "script"
    steer_by = RERUN

    def build(self, ctx: LaunchContext) -> tuple[list[str], dict[str, str], Path | None]:
        script = self.config.get("script")
        if not isinstance(script, str) or not script.strip():
            raise AdapterError(
                f"adapter {self.manifest.id!r}: runtime_kind script needs config.script",
                fix="set config.script to the shell command to run",
            )
        return ["/bin/sh", "-c", script], {}, None


class CommandAdapter(Adapter):
    """``config.command``: any agent CLI, ``{prompt_file}`` substituted shell-quoted."""

    kind = "command"
    steer_by = RERUN

    def build(self, ctx: LaunchContext) -> tuple[list[str], dict[str, str], Path | None]:
        command = self.config.get("command")
        if not isinstance(command, str) or not command.strip():
            raise AdapterError(
                f"adapter {self.manifest.id!r}: runtime_kind command needs config.command",
                fix='set config.command, e.g. "my-agent --prompt-file {prompt_file}"',
            )
        return ["/bin/sh", "-c", substitute_prompt(command, ctx.prompt_file)], {}, None
