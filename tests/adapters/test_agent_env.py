"""What an agent receives of the operator's environment (adapters/agentenv.py): the basics,
uh's own, its manifest's ``env_pass`` (else its kind's defaults), the project's
``agent_env``; nothing else. Real processes: the agent's ``env`` is read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adapters.conftest import Sandbox, adapter_for, drive
from tests.conftest import Repo
from uh_core.adapters.agentenv import (
    BASIC,
    KIND_ENV_PASS,
    Rule,
    admitted,
    declared,
    project_allow_list,
)
from uh_core.adapters.registry import KINDS, builtin_manifests, make_adapter
from uh_core.cli.schema_cmd import schema_of
from uh_core.errors import UhError
from uh_core.layout import Layout
from uh_core.models.adapter import AdapterManifest

SHELL = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/op",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "XDG_CACHE_HOME": "/home/op/.cache",
    "XDG_SESSION_ID": "3",  # not a *_HOME
    "https_proxy": "http://proxy:3128",
    "UH_STATE_DIR": "/state",
    "AWS_SECRET_ACCESS_KEY": "aws",
    "GITHUB_TOKEN": "gh",
    "GH_TOKEN": "gh",
    "RAY_AUTH_TOKEN": "ray",
    "RAY_ADDRESS": "10.0.0.1:6379",
    "SSH_AUTH_SOCK": "/run/ssh",
    "PYTHONPATH": "/home/op/src",
    "OPENAI_API_KEY": "sk-openai",
    "OPENAI_BASE_URL": "http://models",
    "ANTHROPIC_API_KEY": "sk-ant",
    "CLAUDE_CONFIG_DIR": "/home/op/.claude",
    "DISABLE_AUTOUPDATER": "1",
    "CODEX_HOME": "/home/op/.codex",
    "PI_OFFLINE": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "MY_TOOL_URL": "http://tool",
    "MY_TOOL_KEY": "k",
    "GIT_DIR": "/elsewhere/.git",
}
ALWAYS_DROPPED = {
    "AWS_SECRET_ACCESS_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "RAY_AUTH_TOKEN",
    "RAY_ADDRESS",
    "SSH_AUTH_SOCK",
    "PYTHONPATH",
    "GIT_DIR",
    "XDG_SESSION_ID",
}


def _rules(
    kind: str, env_pass: list[str] | None = None, project: tuple[str, ...] = ()
) -> dict[str, Rule]:
    return admitted(
        SHELL,
        set_by_uh={"MISSION_ID": "m"},
        manifest=declared(kind, env_pass),
        project=project,
    )


def test_the_basics_and_uh_pass_and_secrets_do_not() -> None:
    rules = _rules("script")
    assert rules == {
        "HOME": "basic",
        "LANG": "basic",
        "LC_ALL": "basic",
        "MISSION_ID": "uh",  # set by uh, whatever the shell holds
        "PATH": "basic",
        "UH_STATE_DIR": "uh",
        "XDG_CACHE_HOME": "basic",
        "https_proxy": "basic",
    }
    assert list(rules) == sorted(rules)


@pytest.mark.parametrize(
    ("kind", "own", "foreign"),
    [
        ("codex", {"OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"}, {"ANTHROPIC_API_KEY"}),
        (
            "claude",
            {"ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR", "DISABLE_AUTOUPDATER"},
            {"OPENAI_API_KEY", "CODEX_HOME"},
        ),
        (
            "aider",
            {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LITELLM_LOCAL_MODEL_COST_MAP"},
            {"CODEX_HOME", "CLAUDE_CONFIG_DIR"},
        ),
        ("pi", {"PI_OFFLINE", "OPENAI_API_KEY"}, {"CODEX_HOME"}),
        ("oh-my-pi", {"PI_OFFLINE", "ANTHROPIC_API_KEY"}, {"CLAUDE_CONFIG_DIR"}),
        ("hermes", {"OPENAI_BASE_URL"}, {"PI_OFFLINE", "CODEX_HOME"}),
        ("script", set(), {"OPENAI_API_KEY", "MY_TOOL_KEY"}),
        ("command", set(), {"OPENAI_API_KEY", "MY_TOOL_KEY"}),
    ],
)
def test_each_kind_receives_its_own_and_no_other(
    kind: str, own: set[str], foreign: set[str]
) -> None:
    rules = _rules(kind)
    assert {name for name, rule in rules.items() if rule == "manifest"} >= own
    assert not (foreign | ALWAYS_DROPPED) & set(rules)


def test_every_kind_has_defaults_and_init_writes_them() -> None:
    assert set(KIND_ENV_PASS) == set(KINDS)
    for adapter_id, data in builtin_manifests().items():
        manifest = AdapterManifest.model_validate(data)
        assert manifest.env_pass == list(KIND_ENV_PASS[manifest.runtime_kind]), adapter_id


def test_a_manifest_declaration_replaces_the_kinds_defaults() -> None:
    narrowed = _rules("aider", ["OPENAI_API_KEY", "OPENAI_BASE_URL"])
    assert narrowed["OPENAI_API_KEY"] == "manifest"
    assert "ANTHROPIC_API_KEY" not in narrowed and "LITELLM_LOCAL_MODEL_COST_MAP" not in narrowed
    script = _rules("script", ["MY_TOOL_*"])
    assert script["MY_TOOL_URL"] == script["MY_TOOL_KEY"] == "manifest"
    assert "OPENAI_API_KEY" not in script
    assert "ANTHROPIC_API_KEY" not in _rules("claude", [])  # an empty list: nothing


def test_globs_are_case_sensitive_and_whole_name() -> None:
    rules = _rules("script", ["my_tool_*", "TOOL"], project=("GH_TOK?N", "AWS_[S]*"))
    assert "MY_TOOL_URL" not in rules and "MY_TOOL_KEY" not in rules
    assert rules["GH_TOKEN"] == "project" and rules["AWS_SECRET_ACCESS_KEY"] == "project"
    assert "GITHUB_TOKEN" not in rules


def test_the_first_rule_names_a_variable() -> None:
    rules = _rules("codex", project=("PATH", "OPENAI_*", "UH_*"))
    assert rules["PATH"] == "basic" and rules["OPENAI_API_KEY"] == "manifest"
    assert rules["UH_STATE_DIR"] == "uh"


@pytest.mark.parametrize("bad", ["", " ", "OPENAI API KEY", "$HOME", "A=B", "a.b"])
def test_a_pattern_that_names_no_variable_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="variable pattern"):
        AdapterManifest(id="x", runtime_kind="script", env_pass=[bad])


def test_the_schema_describes_env_pass() -> None:
    field = schema_of("adapter")["properties"]["env_pass"]
    assert "fnmatch" in field["description"] and "dropped" in field["description"]
    assert "agent_env" in schema_of("harness-config")["properties"]


def test_the_process_receives_exactly_the_admitted_names(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SHELL.items():
        if name not in ("PATH", "HOME"):
            monkeypatch.setenv(name, value)
    manifest = AdapterManifest(
        id="dumper",
        runtime_kind="script",
        config={"script": 'env -0 > "$UH_SANDBOX/env.bin"'},
        env_pass=["MY_TOOL_URL"],
    )
    adapter = make_adapter(manifest, project_env=["GH_TOKEN"])
    run = drive(adapter, sandbox.context(manifest))
    assert run.result.status == "completed", run.result
    data = (sandbox.worktree / "env.bin").read_bytes().split(b"\0")
    received = dict(item.decode().split("=", 1) for item in data if item)
    received.pop("PWD", None)  # /bin/sh sets it itself
    received.pop("SHLVL", None)
    assert set(received) == set(run.plan.env_names)
    assert received["MY_TOOL_URL"] == "http://tool" and received["GH_TOKEN"] == "gh"
    assert received["MISSION_ID"] == "m1" and received["UH_SANDBOX"] == str(sandbox.worktree)
    assert run.plan.env_names["GH_TOKEN"] == "project"
    assert not (ALWAYS_DROPPED - {"GH_TOKEN"}) & set(received)
    assert "OPENAI_API_KEY" not in received and "MY_TOOL_KEY" not in received


def test_a_real_cli_kind_receives_its_key(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-codex")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws")
    plan = adapter_for("codex").prepare(sandbox.context(adapter_for("codex").manifest))
    assert plan.env_names["OPENAI_API_KEY"] == "manifest"
    assert "AWS_SECRET_ACCESS_KEY" not in plan.env_names
    assert "sk-codex" not in plan.model_dump_json()  # a plan holds names, never values


def test_the_project_allow_list_is_read_from_harness_config(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert project_allow_list(layout) == []
    (tmp_path / "harness.config.yaml").write_text("agent_env: [MY_*, GH_TOKEN]\n")
    assert project_allow_list(layout) == ["MY_*", "GH_TOKEN"]
    (tmp_path / "harness.config.yaml").write_text("agent_env: ['MY VAR']\n")
    with pytest.raises(UhError, match=r"harness.config.yaml.*agent_env"):
        project_allow_list(layout)


def test_the_basics_hold_no_secret_shaped_name() -> None:
    for pattern in BASIC:
        assert not any(word in pattern for word in ("KEY", "SECRET", "TOKEN", "PASSWORD"))


def test_dry_run_lists_names_and_rules_never_values(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_TOOL_URL", "value-of-my-tool")
    monkeypatch.setenv("GH_TOKEN", "value-of-gh")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "value-of-aws")
    repo.mission("m", "id: m\ntitle: t\nobjective: o\n")
    repo.write(
        ".harness/adapters/tool.yaml",
        "id: tool\nruntime_kind: script\nconfig:\n  script: env\nenv_pass: [MY_TOOL_*]\n",
    )
    repo.write("harness.config.yaml", "agent_env: [GH_TOKEN]\n")
    text = repo.uh("mission", "dry-run", "m", "--runtime", "tool")
    assert text.code == 0, text.stderr
    for line in ("env: MY_TOOL_URL (manifest)", "env: GH_TOKEN (project)", "env: PATH (basic)"):
        assert line in text.stdout.splitlines()
    assert "env: MISSION_ID (uh)" in text.stdout and "AWS_SECRET_ACCESS_KEY" not in text.stdout
    shown = repo.uh("mission", "dry-run", "m", "--runtime", "tool", "--json")
    data = json.loads(shown.stdout)
    rules = {item["name"]: item["rule"] for item in data["env"]}
    assert rules["MY_TOOL_URL"] == "manifest" and rules["GH_TOKEN"] == "project"
    assert data["plan"]["env_names"] == rules
    for output in (text.stdout, shown.stdout):
        assert "value-of" not in output
    assert not [
        line for line in text.stdout.splitlines() if line.startswith("env:") and "=" in line
    ]
    assert "env" not in data["plan"]  # uh's own values are not shown either
