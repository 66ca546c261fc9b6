"""The harness's gate: its own ``agent`` stage, then the judge's four
(:data:`uh_core.judge.gate.JUDGE_STAGES`), run by the judge's ``run_gate``; listed in one
place (``STAGES``)."""

from __future__ import annotations

from collections.abc import Callable

from uh_core.harness.stages import agent
from uh_core.harness.stages.agent import HarnessGateContext
from uh_core.judge import gate as judge_gate
from uh_core.models.ledger import StageResult

HarnessStage = Callable[[HarnessGateContext], StageResult]

STAGES: tuple[tuple[str, HarnessStage], ...] = (
    ("agent", agent.check),
    *judge_gate.JUDGE_STAGES,
)


def run_gate(
    ctx: HarnessGateContext,
    on_stage: Callable[[StageResult], None] | None = None,
    stages: tuple[tuple[str, HarnessStage], ...] = STAGES,
) -> list[StageResult]:
    return judge_gate.run_gate(ctx, on_stage, stages)
