"""What uh writes for a file both tools read is accepted by the TypeScript uh's own schemas
(tests/fixtures/ts_uh/schemas, generated from its zod schemas; SOURCE.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.compat.conftest import TS_UH
from tests.conftest import Repo
from uh_core.compat.readers import load_promotion
from uh_core.layout import Layout
from uh_core.models.promotion import PromotionDecision
from uh_core.promote.record import write_decision

# jsonschema is not a dependency of uh: it comes with the mcp SDK (and ray). Tests only.
jsonschema = pytest.importorskip("jsonschema")


def problems(document: Any, schema: str) -> list[str]:
    spec = json.loads((TS_UH / "schemas" / schema).read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(spec)
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(document)
    ]


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_verification_written_by_uh_is_accepted(repo: Repo) -> None:
    repo.mission(
        "m",
        """\
        id: m
        title: M
        workflow_profile: staged
        verification:
          required_checks:
            - {name: c, command: "true"}
        acceptance_criteria:
          - {id: a, description: runs, check_command: "true"}
          - {id: b, description: looked at by a person, severity: warn}
          - {id: c, description: fails, check_command: "false", severity: warn}
        """,
    )
    assert repo.uh("verify", "m").code == 0
    path = repo.root / ".harness/missions/m/verification.yaml"
    assert problems(load(path), "verification-result.schema.json") == []
    assert "null" not in path.read_text(encoding="utf-8")


def test_manifests_written_by_init_are_accepted(repo: Repo) -> None:
    manifests = sorted((repo.root / ".harness/adapters").glob("*.yaml"))
    assert len(manifests) >= 5
    for path in manifests:
        assert problems(load(path), "adapter-manifest.schema.json") == [], path.name
    assert problems(load(repo.root / ".harness/project.yaml"), "project.schema.json") == []


def test_promotion_written_by_uh_is_accepted(repo: Repo) -> None:
    layout = Layout(repo.root)
    decision = PromotionDecision(
        mission_id="m",
        decision="rejected",
        approved_by="ana",
        promoted_at="2026-12-01T11:00:00.000Z",
        source="branch",
        branch="harness/m",
        base_commit="a" * 40,
        source_tree="b" * 40,
        diff_hash="0123456789abcdef",
        audit_event_id="promotion-1",
    )
    first = write_decision(layout, decision, None)
    write_decision(layout, decision.model_copy(update={"decision": "promoted"}), first)
    path = layout.promotion_file("m")
    assert problems(load(path), "promotion.schema.json") == []
    assert load_promotion(path).decisions()[0].decision == "rejected"  # read back unchanged


def test_the_ts_files_pass_their_own_schemas() -> None:
    """The check itself: the files the TypeScript uh wrote pass the vendored schemas."""
    written = TS_UH / "written"
    pairs = [
        ("missions/tsm/verification.yaml", "verification-result.schema.json"),
        ("missions/tsm/promotion.yaml", "promotion.schema.json"),
        ("sandboxes/index.yaml", "sandboxes-index.schema.json"),
        ("missions/tsm/runtime-result.yaml", "runtime-result.schema.json"),
    ]
    for rel, schema in pairs:
        doc = json.loads(json.dumps(load(written / rel), default=str))
        assert problems(doc, schema) == [], rel
    for rel, schema in [
        ("missions/tsm/latest.json", "latest-run.schema.json"),
        ("missions/tsm/runs/index.json", "runs-index.schema.json"),
    ]:
        assert problems(json.loads((written / rel).read_text()), schema) == [], rel
    assert problems(
        {"schema_version": "uh.verification-result.v0"}, "verification-result.schema.json"
    )
