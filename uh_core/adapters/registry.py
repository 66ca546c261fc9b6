"""Adapters register by ``runtime_kind``; modules are imported only when a kind is used."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

from uh_core.adapters.agentenv import KIND_ENV_PASS
from uh_core.adapters.base import Adapter
from uh_core.errors import AdapterError
from uh_core.models.adapter import AdapterManifest

# runtime_kind -> "module:Class"
KINDS: dict[str, str] = {
    "script": "uh_core.adapters.offline:ScriptAdapter",
    "command": "uh_core.adapters.offline:CommandAdapter",
    "codex": "uh_core.adapters.codex:CodexAdapter",
    "claude": "uh_core.adapters.claude:ClaudeAdapter",
    "pi": "uh_core.adapters.pi:PiAdapter",
    "oh-my-pi": "uh_core.adapters.pi:OhMyPiAdapter",
    "aider": "uh_core.adapters.aider:AiderAdapter",
    "hermes": "uh_core.adapters.hermes:HermesAdapter",
}
ALIASES = {"claude-code": "claude", "omp": "oh-my-pi"}


def adapter_class(kind: str) -> type[Adapter]:
    target = KINDS.get(ALIASES.get(kind, kind))
    if target is None:
        known = ", ".join(sorted(KINDS))
        raise AdapterError(
            f"runtime_kind {kind!r} has no adapter in this version of uh",
            fix=f"use one of: {known}",
        )
    module_name, class_name = target.split(":")
    cls: type[Adapter] = getattr(importlib.import_module(module_name), class_name)
    return cls


def make_adapter(manifest: AdapterManifest, project_env: Sequence[str] = ()) -> Adapter:
    """The adapter of ``manifest``'s kind; ``project_env``: harness.config.yaml's
    ``agent_env`` (``agentenv.project_allow_list``), which its agents receive too."""
    return adapter_class(manifest.runtime_kind)(manifest, project_env)


def builtin_manifests() -> dict[str, dict[str, Any]]:
    """Manifests ``uh-core init`` writes for the real agent CLIs.

    They start ``experimental`` (not ``active``): run-all's default set is what you activate,
    so a machine without these CLIs never tries them unasked. Each still runs when named.
    ``experimental`` rather than ``inactive``, and ``runtime`` beside ``runtime_kind``: the
    TypeScript uh's ``adapter list`` accepts only active/experimental/deprecated and requires
    ``runtime`` (docs/compat.md).
    """
    common: dict[str, Any] = {"schema_version": "uh.adapter.v0", "status": "experimental"}
    entries = {
        "codex": (
            "OpenAI Codex CLI",
            "codex",
            [
                "cli-execution",
                "non-interactive",
                "one-shot",
                "worktree-isolation",
                "json-output",
                "structured-events",
            ],
        ),
        "claude": (
            "Claude Code",
            "claude",
            [
                "cli-execution",
                "non-interactive",
                "one-shot",
                "worktree-isolation",
                "json-output",
                "structured-events",
            ],
        ),
        "pi": (
            "pi",
            "pi",
            ["cli-execution", "non-interactive", "one-shot", "worktree-isolation", "json-output"],
        ),
        "oh-my-pi": (
            "oh-my-pi",
            "omp",
            ["cli-execution", "non-interactive", "one-shot", "worktree-isolation", "json-output"],
        ),
        "aider": (
            "aider",
            "aider",
            ["cli-execution", "non-interactive", "one-shot", "worktree-isolation"],
        ),
        "hermes": (
            "Hermes Agent",
            "hermes",
            ["cli-execution", "non-interactive", "one-shot", "worktree-isolation"],
        ),
    }
    return {
        adapter_id: {
            **common,
            "id": adapter_id,
            "name": name,
            "runtime_kind": adapter_id,
            "runtime": adapter_id,
            "capabilities": capabilities,
            "supported_sandbox_backends": ["git-worktree"],
            "config": {"cli_command": binary, "runtime_config": {}},
            # what of the operator's environment it receives (docs/adapters.md)
            "env_pass": list(KIND_ENV_PASS[adapter_id]),
        }
        for adapter_id, (name, binary, capabilities) in entries.items()
    }
