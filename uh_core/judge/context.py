"""What every gate stage receives (``GateContext``) and the one stage signature.

Nothing here names an agent: the judge judges a tree, whoever made it. The harness's own
``agent`` stage reads the agent's exit from its subclass
(:class:`uh_core.harness.stages.agent.HarnessGateContext`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from uh_core.isolation.bwrap import Resolved
from uh_core.judge.settings import Settings
from uh_core.layout import Layout
from uh_core.models.ledger import StageResult
from uh_core.models.mission import Mission


@dataclass
class GateContext:
    layout: Layout  # the main checkout (never written by a stage)
    records: Layout  # the sandbox: commands run in its root, records go to the operator's side
    mission: Mission  # as loaded from the base commit, never the worktree's copy
    settings: Settings
    worktree: Path
    branch: str
    base_commit: str
    run_id: str
    attempt: int
    attempt_dir: Path  # this attempt's evidence, in the operator's .harness/sandboxes/<sbx>/
    patch: Path  # the judged tree against the base commit
    touched: list[str]  # every path the patch touches
    git_dir: Path  # the operator's git directory: the only one the engine runs git with
    tree: str  # the snapshot judged: a tree object in the operator's store
    isolation: Resolved  # how the stages run the agent's code (judge/room.py)


Stage = Callable[[GateContext], StageResult]
