"""``sandbox.promotion_policy: auto-on-verify``: a passing sandbox verify promotes by itself
(the policy itself: :mod:`uh_core.promote.policy`); ``harness run --promote-green
--approved-by NAME``: each mission whose gate passed is promoted from its branch as the run
goes (``after_harness_green``).

The automatic promotion is an ordinary ``promote`` with ``approved_by: auto-on-verify`` and
``auto: true``: the same clean-tree, verification and conflict rules. When it cannot apply,
``promotion.auto-failed`` says why, no promotion.yaml is written, and the verify result and
its exit code stand.
"""

from __future__ import annotations

from dataclasses import dataclass

from uh_core.clock import new_run_id
from uh_core.errors import UhError
from uh_core.layout import Layout
from uh_core.models.events import PromotionAutoFailed, PromotionAutoTriggered
from uh_core.models.mission import Mission
from uh_core.models.promotion import PromotionRecord
from uh_core.models.verification import VerificationResult
from uh_core.promote.decide import PromotionRequest, promote
from uh_core.promote.policy import AUTO_APPROVER, is_auto
from uh_core.promote.record import emit
from uh_core.sandbox.worktree import get_sandbox


@dataclass(frozen=True)
class AutoOutcome:
    record: PromotionRecord | None  # the promotion made
    failure: str | None  # why it could not be made


def after_sandbox_verify(
    layout: Layout, mission: Mission, sandbox_id: str, result: VerificationResult
) -> AutoOutcome | None:
    """Promote ``sandbox_id`` when ``result`` passed and the mission asks for it; else None.

    Never raises for a promotion that cannot happen: that is ``promotion.auto-failed``."""
    if result.status != "passed" or not is_auto(mission):
        return None
    runtime = get_sandbox(layout, sandbox_id).runtime
    emit(
        layout,
        mission.id,
        PromotionAutoTriggered(
            event_id=new_run_id("auto-promotion"),
            sandbox_id=sandbox_id,
            runtime=runtime,
            verify_run_id=result.run_id,
        ),
    )
    request = PromotionRequest(mission.id, AUTO_APPROVER, sandbox_id=sandbox_id, auto=True)
    failed = PromotionAutoFailed(
        event_id=new_run_id("auto-promotion"),
        sandbox_id=sandbox_id,
        runtime=runtime,
        verify_run_id=result.run_id,
    )
    return _attempt(layout, request, failed)


def _attempt(layout: Layout, request: PromotionRequest, failed: PromotionAutoFailed) -> AutoOutcome:
    """``promote(request)``; never raises: what stopped it is ``failed`` with its reason (the
    verdict that asked for it stands whatever went wrong here)."""
    try:
        return AutoOutcome(promote(layout, request), None)
    except UhError as exc:
        reason = exc.one_line()
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
    emit(layout, request.mission_id, failed.model_copy(update={"reason": reason}))
    return AutoOutcome(None, reason)


def after_harness_green(
    layout: Layout, mission_id: str, branch: str, approved_by: str
) -> AutoOutcome:
    """Promote ``branch`` (a green the ledger records) as ``approved_by`` under
    ``--promote-green``: the promote path's own rules — the gate's verdict from the ledger,
    a clean main tree, the re-judge, no unconfined or ``needs review`` green, conflicts
    refused. Never raises: a promotion that cannot happen is ``promotion.auto-failed``, and
    the branch waits for a human as it always did."""
    event_id = new_run_id("auto-promotion")
    emit(layout, mission_id, PromotionAutoTriggered(event_id=event_id, branch=branch))
    request = PromotionRequest(
        mission_id, approved_by, branch=branch, auto=True,
        note=f"harness run --promote-green: approved by {approved_by} for every green",
    )  # fmt: skip
    return _attempt(layout, request, PromotionAutoFailed(event_id=event_id, branch=branch))
