"""Verifying a mission inside a sandbox: the mission as it stands in the main checkout
(never the sandbox's copy, which an agent may have edited), commands run in the worktree,
evidence kept in the worktree's own ``.harness/missions/<id>/``. The verdict and the hash of
the diff it judged are stamped on the sandbox's index entry (for promotion)."""

from __future__ import annotations

from uh_core.layout import Layout
from uh_core.models.mission import Mission
from uh_core.models.verification import VerificationResult
from uh_core.sandbox.verified import record_verify
from uh_core.sandbox.worktree import get_sandbox
from uh_core.verify.runner import VerifyOptions, verify_mission
from uh_core.verify.synthetic import synthetic_criteria


def sandbox_layout(layout: Layout, sandbox_id: str) -> Layout:
    entry = get_sandbox(layout, sandbox_id)
    return Layout(layout.root / entry.worktree)


def verify_in_sandbox(
    layout: Layout, mission: Mission, sandbox_id: str, options: VerifyOptions
) -> VerificationResult:
    inner = sandbox_layout(layout, sandbox_id)
    options.workdir = inner.root
    options.synthetic = synthetic_criteria(inner, mission)
    result = verify_mission(inner, mission, options)
    record_verify(layout, sandbox_id, result)
    return result
