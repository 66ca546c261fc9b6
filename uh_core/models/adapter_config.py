"""What ``config`` holds in a runtime manifest, per ``runtime_kind`` — for ``uh-core schema
adapter`` and editors. The manifest itself keeps ``config`` an open mapping (each adapter
reads and checks its own keys when it builds the command line, naming the key and the fix);
these models describe those keys, they do not validate manifests."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Config(BaseModel):
    model_config = ConfigDict(extra="allow")


class ScriptConfig(_Config):
    """``runtime_kind: script`` — a shell command, no agent CLI."""

    script: str = Field(
        description=(
            "Run with /bin/sh -c in the sandbox's worktree. The prompt's path is in "
            "$UH_PROMPT_FILE (also MISSION_ID, UH_SANDBOX, UH_RUNTIME). Exit 0 = completed; "
            "stdout is the model output, and its last fenced block tagged "
            "uh-runtime-final-message is the final message."
        )
    )


class CommandConfig(_Config):
    """``runtime_kind: command`` — any agent command line."""

    command: str = Field(
        description=(
            "Run with /bin/sh -c in the sandbox's worktree; must contain {prompt_file}, "
            "replaced by the prompt file's path, shell-quoted (e.g. "
            "'my-agent --prompt-file {prompt_file}'). Exit 0 = completed."
        )
    )


_MODEL = "The model: passed as the CLI's model flag unless runtime_config.model is set."
_PROVIDER = "The provider: passed to the CLI unless runtime_config.provider is set."


class CliConfig(_Config):
    """The agent CLIs (codex, claude, pi, oh-my-pi, aider, hermes)."""

    cli_command: str | None = Field(
        default=None,
        description="The CLI to run (a name on PATH or a path); default: the kind's binary.",
    )
    default_model: str | None = Field(default=None, description=_MODEL)
    default_provider: str | None = Field(
        default=None, description=_PROVIDER + " (claude: not read)"
    )
    runtime_config: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "Settings of this kind: model and provider (over default_model, "
            "default_provider); codex: sandbox_mode, approval_policy; claude: "
            "permission_mode, allowed_tools; pi and oh-my-pi: thinking, allow_extensions, "
            "allow_skills; aider: map_tokens, edit_format; hermes: toolsets "
            "(docs/adapters.md, 'Manifest settings each reads')."
        ),
    )
    isolation_readable: list[str] = Field(
        default_factory=list,
        description="Under bubblewrap: more paths the agent may read (its CLI's files).",
    )
    isolation_writable: list[str] = Field(
        default_factory=list,
        description="Under bubblewrap: more paths the agent may write (its CLI's home).",
    )


class HermesConfig(CliConfig):
    """``runtime_kind: hermes``."""

    default_toolsets: list[str] | str | None = Field(
        default=None, description="Toolsets (a list, or 'a,b') unless runtime_config.toolsets."
    )
    pass_session_id: bool | None = Field(default=None, description="true: --pass-session-id.")


# runtime_kind (with its aliases) -> the model describing its config
CONFIG_BY_KIND: dict[str, tuple[tuple[str, ...], type[BaseModel]]] = {
    "script": (("script",), ScriptConfig),
    "command": (("command",), CommandConfig),
    "codex": (("codex",), CliConfig),
    "claude": (("claude", "claude-code"), CliConfig),
    "pi": (("pi",), CliConfig),
    "oh-my-pi": (("oh-my-pi", "omp"), CliConfig),
    "aider": (("aider",), CliConfig),
    "hermes": (("hermes",), HermesConfig),
}


def describe_config(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (the manifest's JSON Schema) with ``config`` described per runtime kind:
    one ``if runtime_kind is K then config is K's`` rule per kind, the models in ``$defs``."""
    defs = schema.setdefault("$defs", {})
    rules = []
    for names, model in CONFIG_BY_KIND.values():
        name = model.__name__
        if name not in defs:
            sub = model.model_json_schema(ref_template="#/$defs/{model}")
            defs.update(sub.pop("$defs", {}))
            defs[name] = sub
        rules.append(
            {
                "if": {
                    "properties": {"runtime_kind": {"enum": list(names)}},
                    "required": ["runtime_kind"],
                },
                "then": {"properties": {"config": {"$ref": f"#/$defs/{name}"}}},
            }
        )
    config = schema["properties"]["config"]
    config["description"] = (
        "Settings of the runtime's kind; what each kind reads is described per runtime_kind "
        "(allOf below): script needs config.script, command config.command, the agent CLIs "
        "take cli_command, default_model, default_provider and runtime_config. Other keys "
        "are kept and ignored."
    )
    schema.setdefault("allOf", []).extend(rules)
    return schema
