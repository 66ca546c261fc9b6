"""The judge's gate: four stages, in this order, each a small function with one signature
(``GateContext → StageResult``), listed in one place (``JUDGE_STAGES``).

The gate stops at the first stage that fails (that stage and its output are what the next
prompt carries); every stage that ran is recorded with its output, in the ledger and as a
``harness.gate.checked`` event the moment it is decided. The harness puts its own ``agent``
stage first (:data:`uh_core.harness.gate.STAGES`); ``run_gate`` runs either list.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from uh_core.diff.capture import capture_diff
from uh_core.diff.patch_paths import scan_file
from uh_core.errors import UhError
from uh_core.judge.context import GateContext, Stage
from uh_core.judge.stages import artifacts, tests, verify, write_scope
from uh_core.models.ledger import StageResult

JUDGE_STAGES: tuple[tuple[str, Stage], ...] = (
    ("write-scope", write_scope.check),
    ("verify", verify.check),
    ("tests", tests.check),
    ("artifacts", artifacts.check),
)

C = TypeVar("C", bound=GateContext)


def capture_changes(worktree: Path, patch: Path, base_commit: str) -> list[str]:
    """Capture the worktree against the base (commits, staging, untracked; never timestamps)
    into ``patch``; the paths it touches."""
    capture_diff(worktree, patch, base_commit)
    return scan_file(patch).paths


def run_gate(
    ctx: C,
    on_stage: Callable[[StageResult], None] | None = None,
    stages: Sequence[tuple[str, Callable[[C], StageResult]]] = JUDGE_STAGES,
) -> list[StageResult]:
    results: list[StageResult] = []
    for name, check in stages:
        started = time.monotonic()
        try:
            result = check(ctx)
        except UhError as exc:
            result = StageResult(
                stage=name,
                passed=False,
                detail=f"the stage could not run: {exc.one_line()}",
                output=exc.one_line(),
            )
        result.stage = name
        result.duration_ms = int((time.monotonic() - started) * 1000)
        results.append(result)
        if on_stage is not None:
            on_stage(result)
        if not result.passed:
            break
    return results
