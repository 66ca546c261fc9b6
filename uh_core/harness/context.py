"""What every gate stage receives (``GateContext``) and the one stage signature."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from uh_core.harness.agent import AgentOutcome
from uh_core.harness.config import Settings
from uh_core.layout import Layout
from uh_core.models.ledger import StageResult
from uh_core.models.mission import Mission


@dataclass
class GateContext:
    layout: Layout  # the main checkout (never written by a stage)
    mission: Mission  # as loaded from the base commit, never the worktree's copy
    settings: Settings
    worktree: Path
    branch: str
    base_commit: str
    run_id: str
    attempt: int
    attempt_dir: Path  # this attempt's evidence, inside the worktree's ignored .harness/
    patch: Path  # the worktree against the base commit, by content
    touched: list[str]  # every path the patch touches
    agent: AgentOutcome


Stage = Callable[[GateContext], StageResult]
