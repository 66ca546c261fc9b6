"""Every file the TypeScript uh writes, read through uh's loaders (uh_core.compat)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compat.conftest import TS_UH
from tests.conftest import Repo
from uh_core.compat import ts
from uh_core.compat.readers import (
    comparison_from_markdown,
    load_promotion,
    load_runtime_result,
    load_sandbox_index,
    load_verification,
    read_audit_log,
    read_markdown_comparison,
    read_ts_runs,
)
from uh_core.events.reader import read_events
from uh_core.layout import Layout
from uh_core.models.events import PromotionRecorded, VerificationFinished, VerificationStarted

W = TS_UH / "written"


def test_verification_without_run_id_or_times_or_codes() -> None:
    result = load_verification(W / "missions/tsm/verification.yaml")
    assert result.status == "passed"
    assert result.run_id.startswith("ts-") and result.started_at == result.finished_at
    assert result.finished_at.endswith("Z")
    assert [f.code for f in result.findings] == ["ac_failed"]
    assert result.findings[0].ac_id == "AC-2"
    assert result.checks[0].exit_code == 0 and result.checks[0].stdout_snippet == "hi"
    tdd = next(a for a in result.acceptance_criteria if a.id == ts.TDD_ID)
    assert tdd.synthetic
    acc = result.summary.acceptance
    assert (acc.passed, acc.warn_failed, acc.blocked, acc.total) == (2, 1, 1, 4)
    blocked = load_verification(W / "missions/codex-e2e-smoke/verification.yaml")
    assert blocked.status == "blocked" and blocked.findings[0].code == "nothing_can_fail"


def test_waived_reads_blocked_with_a_finding() -> None:
    data = {
        "schema_version": "uh.verification-result.v0",
        "mission_id": "m",
        "status": "waived",
        "checks": [{"name": "c", "type": "review", "status": "waived"}],
    }
    out = ts.verification(data, "2026-12-01T00:00:00.000Z")
    assert out["status"] == "blocked" and out["checks"][0]["status"] == "blocked"
    assert out["checks"][0]["type"] == "manual"
    assert sum(f["code"] == "ts_waived" for f in out["findings"]) == 2


def test_promotion_with_unquoted_timestamps_and_no_source() -> None:
    record = load_promotion(W / "missions/tsm/promotion.yaml")
    assert record.decision == "promoted" and record.approved_by == "auto-on-verify"
    assert record.promoted_at == "2026-12-01T11:09:51.119Z"  # a datetime in YAML
    assert record.source == "branch" and record.base_commit == "" and record.auto
    assert record.audit_event_id.startswith("promotion-")
    assert len(record.decisions()) == 1


def test_sandbox_index_with_path_and_no_base_commit() -> None:
    index = load_sandbox_index(W / "sandboxes/index.yaml")
    first = index.find("sbx-ts-1")
    assert first is not None
    assert first.worktree == ".harness/sandboxes/sbx-ts-1/worktree"
    assert first.base_commit == "HEAD" and first.branch == "sandbox/sbx-ts-1"  # metadata.yaml
    assert first.created_at == "2026-12-01T11:09:56.308Z"
    # the TypeScript keys stay, so an index uh writes back still has them
    assert first.model_dump()["path"] == first.worktree


def test_runtime_result_runs_index_and_latest(ts_repo: Repo) -> None:
    result = load_runtime_result(W / "missions/tsm/runtime-result.yaml")
    assert result.status == "completed" and result.exit_code == 0
    assert result.logs["stdout"].endswith("runtime.stdout.log")
    assert result.changes.diff_ref and result.changes.diff_ref.endswith("diff.patch")
    runs = read_ts_runs(Layout(ts_repo.root), "tsm")
    assert runs.latest == "20261201T110952Z-d06a4b" and not runs.problems
    (run,) = runs.runs
    assert (run.status, run.runtime, run.verdict) == ("passed", "hermes", "needs-attention")
    assert run.result is not None and run.result.status == "completed"
    assert run.events is not None


def test_audit_verdict_lines() -> None:
    (line,) = read_audit_log(W / "audit.log")
    assert line == {
        "event": "verdict.recorded",
        "timestamp": "2026-12-01T11:09:54.363Z",
        "mission_id": "tsm",
        "value": "needs-attention",
        "recorded_by": "manual",
    }
    assert ts.audit_line("not a verdict") is None


def test_comparison_written_only_as_markdown() -> None:
    comparison = read_markdown_comparison(W / "missions/tsm/runtime-comparison.md", "tsm")
    assert comparison.status == "divergent" and comparison.divergent_runtimes == ["hermes"]
    (row,) = comparison.runtimes
    assert (row.runtime, row.status, row.exit_code, row.duration_ms) == (
        "hermes",
        "succeeded",
        0,
        536,
    )
    assert row.diff_hash == "982db248010826d7"
    assert row.sandbox == "sbx-tsm-hermes-20261201110958"
    assert row.touched_paths == ["src/a.ts", "tests/a.test.ts"]
    assert comparison.groups[0].runtimes == ["hermes"]
    agreed = comparison_from_markdown(
        "- Agreement: yes\n\n## Per-runtime outcomes\n\n| `a` | succeeded | 0 | 1ms | `h` | 1 | `s` |\n"
        "| `b` | succeeded | 0 | 2ms | `h` | 1 | `t` |\n",
        "m",
    )
    assert agreed["status"] == "agreement" and agreed["agreement_runtimes"] == ["a", "b"]


def test_ts_events_translated() -> None:
    events, malformed = read_events(W / "missions/tsm/events.ndjson")
    assert malformed == 0
    started = next(e for e in events if isinstance(e, VerificationStarted))
    assert (started.model_extra or {}).get("totals_known") is False
    finished = next(e for e in events if isinstance(e, VerificationFinished))
    assert finished.summary["checks"]["total"] == 1
    assert finished.summary["acceptance"]["total"] == 4
    recorded = next(e for e in events if isinstance(e, PromotionRecorded))
    assert recorded.event_id.startswith("promotion-")
    run_log = next((W / "missions/tsm/runs").glob("*/events.ndjson"))
    kinds = [e.event for e in read_events(run_log)[0]]
    assert kinds == ["runtime.started", "runtime.finished", "runtime.usage"]


def test_uh_files_are_not_translated(tmp_path: Path) -> None:
    """A document in uh's own shape goes to the model as it is."""
    assert not ts.is_ts_verification({"run_id": "r"})
    assert not ts.is_ts_promotion({"source": "sandbox"})
    assert not ts.is_ts_sandbox_index({"sandboxes": [{"worktree": "/x"}]})
    assert not ts.is_ts_runtime_result({"changes": {}})
    assert ts.event({"event": "verification.finished", "summary": {}}) == {
        "event": "verification.finished",
        "summary": {},
    }
    assert json.loads(json.dumps(ts.stamp("x"))) == "x"
