"""``uh-core schema NAME`` prints a JSON Schema for each file kind."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Repo
from uh_core.cli.schema_cmd import SCHEMAS


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema(repo: Repo, name: str) -> None:
    result = repo.uh_raw("schema", name)
    assert result.code == 0, result.stderr
    schema = json.loads(result.stdout)
    assert schema.get("properties") or schema.get("oneOf") or schema.get("anyOf")


def test_event_schema_is_a_union_of_every_type(repo: Repo) -> None:
    schema = json.loads(repo.uh_raw("schema", "event").stdout)
    text = json.dumps(schema)
    for name in ("acceptance.checked", "runtime.comparison.summary", "harness.gate.checked"):
        assert name in text


def test_unknown_schema_name(repo: Repo) -> None:
    result = repo.uh_raw("schema", "nope")
    assert result.code == 2 and "invalid choice" in result.stderr
