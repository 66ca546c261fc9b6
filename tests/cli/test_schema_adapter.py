"""``uh-core schema adapter`` describes ``config`` per runtime kind."""

from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from tests.conftest import Repo


def _errors(schema: dict, manifest: dict) -> list[str]:  # type: ignore[type-arg]
    return [e.message for e in Draft202012Validator(schema).iter_errors(manifest)]


def test_config_is_described_per_runtime_kind(repo: Repo) -> None:
    result = repo.uh_raw("schema", "adapter")
    assert result.code == 0, result.stderr
    schema = json.loads(result.stdout)
    Draft202012Validator.check_schema(schema)
    defs = schema["$defs"]
    assert "UH_PROMPT_FILE" in defs["ScriptConfig"]["properties"]["script"]["description"]
    assert "{prompt_file}" in defs["CommandConfig"]["properties"]["command"]["description"]
    for key in ("cli_command", "default_model", "default_provider", "runtime_config"):
        assert defs["CliConfig"]["properties"][key]["description"]
    kinds = {
        k for rule in schema["allOf"] for k in rule["if"]["properties"]["runtime_kind"]["enum"]
    }
    assert {"script", "command", "codex", "claude", "pi", "oh-my-pi", "aider", "hermes"} <= kinds
    assert schema["properties"]["runtime_kind"]["description"]
    base = {"schema_version": "uh.adapter.v0", "id": "x"}
    assert _errors(schema, {**base, "runtime_kind": "script", "config": {"script": "true"}}) == []
    assert _errors(schema, {**base, "runtime_kind": "script", "config": {}}) == [
        "'script' is a required property"
    ]
    assert _errors(schema, {**base, "runtime_kind": "command", "config": {"command": 1}})
    codex = {**base, "runtime_kind": "codex", "config": {"default_model": "m", "other": 1}}
    assert _errors(schema, codex) == []


def test_every_builtin_manifest_passes_the_schema(repo: Repo) -> None:
    import yaml

    schema = json.loads(repo.uh_raw("schema", "adapter").stdout)
    manifests = sorted((repo.root / ".harness" / "adapters").glob("*.yaml"))
    assert manifests
    for path in manifests:
        assert _errors(schema, yaml.safe_load(path.read_text())) == [], path.name
