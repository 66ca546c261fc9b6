"""Settings of one harness run. They live in :mod:`uh_core.judge.settings` (the judge reads
them too, and must not import the harness); re-exported here, with the one check only the
harness makes (an agent to run)."""

from __future__ import annotations

from uh_core.errors import UsageError
from uh_core.judge.settings import (
    CONFIG_NAME,
    EXECUTORS,
    Flags,
    Settings,
    load_config,
    resolve,
)

__all__ = [
    "CONFIG_NAME",
    "EXECUTORS",
    "Flags",
    "Settings",
    "load_config",
    "require_agent",
    "resolve",
]


def require_agent(settings: Settings) -> None:
    if settings.agent is None and settings.runtime is None:
        raise UsageError(
            "no agent to run",
            fix="pass --agent 'CMD {prompt_file}' or --runtime NAME, "
            f"or set agent: or runtime: in {CONFIG_NAME}",
        )
