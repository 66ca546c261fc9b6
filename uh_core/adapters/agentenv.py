"""What an agent's process receives of the operator's environment: an allow-list, not all.

An agent is code uh does not trust, run with the operator's shell around it. Inheriting that
shell whole hands it every secret the operator keeps there (cloud credentials, forge
tokens, other providers' keys, a Ray cluster's token) for it to write into its commit or
send away. So the environment is built from four rules, each name admitted by the first
that matches (``fnmatch`` globs, case-sensitive as Linux names are):

- ``uh``: what uh sets for this launch (``MISSION_ID``, ``UH_PROMPT_FILE``, ``UH_SANDBOX``,
  ``UH_RUNTIME``) and uh's own settings inherited as ``UH_*`` (never a secret);
- ``basic``: :data:`BASIC` — locale, terminal, home, paths, proxies and certificates;
- ``manifest``: the runtime manifest's ``env_pass``, or when it has none, its kind's
  defaults (:data:`KIND_ENV_PASS`: its own API key, base URL, model and settings);
- ``project``: ``agent_env`` in ``harness.config.yaml``.

Everything else is dropped. ``mission dry-run`` lists the names and rules, never values.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from uh_core.layout import Layout

Rule = Literal["uh", "basic", "manifest", "project"]

# Every agent gets these when the operator's shell has them. PYTHONPATH, VIRTUAL_ENV and
# LD_* are not here: they change which code the agent's CLI imports (aider and hermes live in
# their own venvs); a project that needs one lists it in ``agent_env``. SSH_AUTH_SOCK and
# GIT_* (other than the identity) are not here: they would lend the agent the operator's keys
# and git configuration. A proxy URL may hold a password: it is passed, since an agent
# behind that proxy reaches its model only through it.
# The session: the path, who, locale and terminal (the judge's checks get these too).
SESSION: tuple[str, ...] = (
    "PATH",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
)
BASIC: tuple[str, ...] = (
    *SESSION,
    "HOME",
    "TMPDIR",
    "XDG_*_HOME",
    "XDG_RUNTIME_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    # who commits, should the agent commit: names a person, holds no secret
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
)

UH_OWN: tuple[str, ...] = ("UH_*",)

_OPENAI = ("OPENAI_*",)
_ANTHROPIC = ("ANTHROPIC_*",)
# pi and oh-my-pi speak to many providers, each through its own key
_PI_PROVIDERS = (
    *_ANTHROPIC,
    *_OPENAI,
    "GEMINI_API_KEY",
    "GROQ_API_KEY",
    "CEREBRAS_API_KEY",
    "XAI_API_KEY",
    "OPENROUTER_API_KEY",
    "MISTRAL_API_KEY",
    "ZAI_API_KEY",
)

# What each built-in kind receives when its manifest declares no ``env_pass``; ``uh-core
# init`` writes the same lists into the manifests it creates. ``script`` and ``command``
# receive nothing beyond the basics unless their manifest says so.
KIND_ENV_PASS: dict[str, tuple[str, ...]] = {
    "script": (),
    "command": (),
    "codex": (*_OPENAI, "CODEX_*"),
    "claude": (
        *_ANTHROPIC,
        "CLAUDE_*",
        "DISABLE_*",  # DISABLE_AUTOUPDATER, DISABLE_TELEMETRY, ...
        "MAX_THINKING_TOKENS",
        "MCP_TIMEOUT",
        "MCP_TOOL_TIMEOUT",
        "BASH_DEFAULT_TIMEOUT_MS",
        "BASH_MAX_TIMEOUT_MS",
        "BASH_MAX_OUTPUT_LENGTH",
    ),
    "aider": (*_OPENAI, *_ANTHROPIC, "AIDER_*", "LITELLM_*"),
    "pi": (*_PI_PROVIDERS, "PI_*"),
    "oh-my-pi": (*_PI_PROVIDERS, "PI_*", "OMP_*"),
    "hermes": ("HERMES_*", "OPENROUTER_API_KEY", "NOUS_*", *_OPENAI, *_ANTHROPIC),
}


def declared(kind: str, env_pass: Sequence[str] | None) -> tuple[str, ...]:
    """The manifest's ``env_pass`` when it has one (it replaces the kind's defaults, so a
    manifest can narrow them too), else the kind's defaults."""
    return tuple(env_pass) if env_pass is not None else KIND_ENV_PASS.get(kind, ())


def _matches(name: str, patterns: Iterable[str]) -> bool:
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def admitted(
    environ: Mapping[str, str],
    *,
    set_by_uh: Iterable[str],
    manifest: Sequence[str],
    project: Sequence[str],
) -> dict[str, Rule]:
    """Every variable the agent receives → the rule that admitted it, sorted by name.

    ``environ`` is the operator's environment (its names are all this reads); ``set_by_uh``
    the names uh sets for this launch, admitted whether or not ``environ`` has them."""
    found: dict[str, Rule] = {name: "uh" for name in set_by_uh}
    rules: tuple[tuple[Rule, Sequence[str]], ...] = (
        ("uh", UH_OWN),
        ("basic", BASIC),
        ("manifest", manifest),
        ("project", project),
    )
    for name in environ:
        if name in found:
            continue
        for rule, patterns in rules:
            if _matches(name, patterns):
                found[name] = rule
                break
    return dict(sorted(found.items()))


def agent_environment(
    names: Iterable[str], set_by_uh: Mapping[str, str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The whole environment of the agent's process: each admitted name with the operator's
    value, uh's own values on top. Names the environment no longer has are left out."""
    source = os.environ if environ is None else environ
    env = {name: source[name] for name in names if name in source}
    env.update(set_by_uh)
    return env


def project_allow_list(layout: Layout) -> list[str]:
    """``agent_env`` of the operator's ``harness.config.yaml`` (never the sandbox's copy,
    which the agent could have edited in an earlier attempt); [] when there is none."""
    from uh_core.models.base import load_yaml_model
    from uh_core.models.harness_config import HarnessConfig

    path = layout.harness_config
    if not path.is_file():
        return []
    return list(load_yaml_model(path, HarnessConfig, layout.rel(path)).agent_env)
