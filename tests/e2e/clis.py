"""The six real agent CLIs as the end-to-end suite drives them: where each is installed
(``install_clis.sh``), and how each is pointed at the scripted model server — its own
configuration file or environment in a home folder of the test's own, exactly what an operator
would do for a self-hosted endpoint (docs/adapters.md, "Pointing a CLI at a model endpoint").
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from uh_core.adapters.agentenv import KIND_ENV_PASS

ROOT = Path(os.environ.get("UH_E2E_CLIS") or Path.home() / ".cache" / "uh-e2e-clis")

# the pins install_clis.sh installs: cli → (what to check, version line it must print)
PINS = {
    "codex": "codex-cli 0.171.0",
    "claude": "2.1.332 (Claude Code)",
    "pi": "0.73.1",
    "omp": "omp/18.2.3",
    "aider": "aider 0.86.2",
    "hermes": "Hermes Agent v0.19.0",
}


@dataclass(frozen=True)
class Cli:
    name: str  # the folder under ROOT
    kind: str  # the adapter's runtime_kind
    binary: str

    @property
    def bin_dir(self) -> Path:
        if self.kind in ("aider", "hermes"):
            return ROOT / self.name / "venv" / "bin"
        return ROOT / self.name / "node_modules" / ".bin"

    def missing(self) -> str | None:
        """Why this CLI cannot be driven here, or None."""
        stamp = ROOT / self.name / ".installed"
        if not stamp.is_file():
            return f"{self.name} is not installed under {ROOT} (run tests/e2e/install_clis.sh)"
        if not (self.bin_dir / self.binary).exists():
            return f"{self.name}: {self.bin_dir / self.binary} is missing"
        if self.kind == "oh-my-pi" and not (self.bin_dir / "bun").exists():
            return "oh-my-pi needs bun, which did not install"
        return None


CLIS = {
    "codex": Cli("codex", "codex", "codex"),
    "claude": Cli("claude", "claude", "claude"),
    "pi": Cli("pi", "pi", "pi"),
    "omp": Cli("omp", "oh-my-pi", "omp"),
    "aider": Cli("aider", "aider", "aider"),
    "hermes": Cli("hermes", "hermes", "hermes"),
}

MODEL = "mock-model"


def _provider(url: str) -> dict[str, object]:
    """A pi / omp ``models.json`` provider for the server (an OpenAI-compatible endpoint)."""
    model = {
        "id": MODEL,
        "name": "Mock",
        "reasoning": False,
        "input": ["text"],
        "contextWindow": 128000,
        "maxTokens": 8192,
        "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
    }
    return {
        "baseUrl": f"{url}/v1",
        "api": "openai-completions",
        "apiKey": "MOCK_KEY",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [model],
    }


def configure(cli: Cli, url: str, home: Path) -> tuple[dict[str, str], str]:
    """Point ``cli`` at the server ``url`` with a fresh ``home``: (environment to set,
    the manifest's ``config`` block as YAML lines)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "MOCK_KEY": "sk-mock", "NO_COLOR": "1"}
    config = [f"cli_command: {cli.bin_dir / cli.binary}", f"default_model: {MODEL}"]
    if cli.kind == "codex":
        codex_home = home / ".codex"
        codex_home.mkdir()
        (codex_home / "config.toml").write_text(
            "[model_providers.mock]\n"
            'name = "mock"\n'
            f'base_url = "{url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "MOCK_KEY"\n'
            "supports_websockets = false\n"
            "request_max_retries = 0\n"
            "stream_max_retries = 0\n",
            encoding="utf-8",
        )
        env["CODEX_HOME"] = str(codex_home)
        # a model codex knows (as recorded): it then offers its apply_patch tool
        config[-1] = "default_model: gpt-5.5"
        config.append("default_provider: mock")
    elif cli.kind == "claude":
        env |= {
            "ANTHROPIC_BASE_URL": url,
            "ANTHROPIC_API_KEY": "sk-ant-mock",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            # claude retries an API error ten times with backoff (minutes) by default
            "CLAUDE_CODE_MAX_RETRIES": "1",
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        }
        (home / ".claude").mkdir()
        config[-1] = "default_model: claude-sonnet-4-6"
    elif cli.kind == "pi":
        agent = home / ".pi" / "agent"
        agent.mkdir(parents=True)
        (agent / "models.json").write_text(json.dumps({"providers": {"mock": _provider(url)}}))
        # pi retries a 429 three times itself (2, 4, 8 s), each try three times more in the
        # OpenAI SDK (honouring Retry-After): 45 s; once, at once, is enough to see it retry
        retry = {"maxRetries": 1, "baseDelayMs": 100, "provider": {"maxRetries": 0}}
        (agent / "settings.json").write_text(json.dumps({"retry": retry}))
        # pi's default folder (~/.pi/agent): PI_CODING_AGENT_DIR would send omp there too
        env["PI_OFFLINE"] = "1"
        config.append("default_provider: mock")
    elif cli.kind == "oh-my-pi":
        agent = home / ".omp" / "agent"
        agent.mkdir(parents=True)
        (agent / "models.yml").write_text(json.dumps({"providers": {"mock": _provider(url)}}))
        # omp retries a failed turn up to ten times, each model call six times in its own
        # transport (honouring Retry-After, not configurable): the turn's retries are off
        (agent / "config.yml").write_text("retry:\n  enabled: false\n", encoding="utf-8")
        env["PATH"] = f"{cli.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"  # bun
        config.append("default_provider: mock")
    elif cli.kind == "aider":
        env |= {
            "OPENAI_API_BASE": f"{url}/v1",
            "OPENAI_API_KEY": "sk-mock",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        # the OpenAI SDK's own retries off (aider's own, about a minute of backoff on a 429,
        # cannot be changed): every model's extra_params
        (home / ".aider.model.settings.yml").write_text(
            "- name: aider/extra_params\n  extra_params:\n    max_retries: 0\n", encoding="utf-8"
        )
        config.append("default_provider: openai")
    elif cli.kind == "hermes":
        hermes = home / ".hermes"
        hermes.mkdir()
        (hermes / "config.yaml").write_text(
            "model:\n"
            "  provider: custom\n"
            f"  base_url: {url}/v1\n"
            f"  default: {MODEL}\n"
            "  api_key: sk-mock\n"
            # one model call, no retry (its default: three, honouring Retry-After)
            "agent:\n"
            "  api_max_retries: 1\n"
            # its Python toolchain probe (python3, pip and pip's own start, for a line in
            # the system prompt) cost a second of CPU per start; its documented switch
            "  environment_probe: false\n",
            encoding="utf-8",
        )
        config.append("default_toolsets: [file, terminal]")
    return env, "\n".join(f"  {line}" for line in config)


def manifest(cli: Cli, config: str, *, runtime_config: str = "") -> str:
    text = f"runtime_kind: {cli.kind}\nstatus: active\n"
    if cli.kind == "codex":  # its provider's env_key (configure): declared, else not passed
        text += f"env_pass: {json.dumps([*KIND_ENV_PASS['codex'], 'MOCK_KEY'])}\n"
    text += f"config:\n{config}\n"
    if runtime_config:
        text += "  runtime_config:\n" + "".join(
            f"    {line}\n" for line in runtime_config.splitlines()
        )
    return text


def available() -> list[str]:
    return [name for name, cli in CLIS.items() if cli.missing() is None]


def which(name: str) -> str | None:
    return shutil.which(name)
