"""Values from files are shown at a bounded length: a huge event field, a huge invalid
value in a mission, a huge description — each costs what its first characters cost."""

from __future__ import annotations

import json

from tests.conftest import Repo
from uh_core.shown import clip


def test_clip_marks_what_it_cut() -> None:
    assert clip("short") == "short"
    assert clip("x" * 1000, 10) == "xxxxxxxxxx…[1,000 characters]"


def test_tail_prints_a_huge_event_field_bounded(repo: Repo) -> None:
    log = repo.root / ".harness/audit/events.ndjson"
    log.parent.mkdir(parents=True, exist_ok=True)
    line = {"event": "x.custom", "timestamp": "2026-12-01T00:00:00.000Z", "blob": "y" * 5_000_000}
    log.write_text(json.dumps(line) + "\n")
    shown = repo.uh("tail")
    assert shown.code == 0
    assert all(len(text) < 3000 for text in shown.stdout.splitlines())
    assert "characters]" in shown.stdout


def test_an_error_quotes_a_huge_value_bounded(repo: Repo) -> None:
    repo.mission(
        "big", "id: big\nacceptance_criteria:\n  - id: a\n    severity: " + "z" * 1_000_000 + "\n"
    )
    validated = repo.uh("mission", "validate", "big")
    assert validated.code == 2
    assert max(len(text) for text in validated.stderr.splitlines()) < 2000
