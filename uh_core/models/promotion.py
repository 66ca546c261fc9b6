"""uh.promotion.v0 (``.harness/missions/<id>/promotion.yaml``): the operator's decision.

The top level is the latest decision; ``history`` keeps every earlier one, oldest first, so
the file alone answers both "what was decided" and "what was decided before". Each decision
is also a ``promotion.recorded`` event (mission log and audit log) whose ``event_id`` is the
decision's ``audit_event_id``. Unknown keys are kept, so later versions can add fields.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from uh_core.models.base import Open
from uh_core.models.proof import FailToPass

PROMOTION_SCHEMA = "uh.promotion.v0"

Decision = Literal["promoted", "rejected", "deferred"]
SourceKind = Literal["sandbox", "branch"]
# passed | failed | blocked (a verify's verdict); unverified (never verified); stale (verified,
# but the sandbox or branch changed since)
VerificationStatus = Literal["passed", "failed", "blocked", "unverified", "stale"]


class PromotionDecision(Open):
    """One decision on what one sandbox or branch produced."""

    mission_id: str
    decision: Decision
    approved_by: str
    promoted_at: str  # when the decision was recorded (for every decision, not only promoted)
    source: SourceKind
    sandbox_id: str | None = None  # the sandbox promoted (None for a branch)
    branch: str | None = None  # the branch promoted, or the sandbox's branch
    runtime: str | None = None
    base_commit: str  # what the change is against: the sandbox's base or the merge-base
    source_commit: str | None = None  # the branch's tip, or the sandbox's HEAD
    source_tree: str  # the whole source as a git tree (content-addressed)
    diff_hash: str  # first 16 hex of sha256 of the whole source's patch (as mission run's)
    changes: list[str] = Field(default_factory=list)  # paths the decision covers (sorted)
    change_filter: list[str] = Field(default_factory=list)  # the --change arguments, if any
    verification_status: VerificationStatus = "unverified"
    verification_run_id: str | None = None
    verification_detail: str = ""
    forced: bool = False  # promoted although the verification did not pass (--force)
    auto: bool = False  # decided by sandbox.promotion_policy: auto-on-verify
    onto_branch: str | None = None  # the branch the promotion commit went onto
    parent_commit: str | None = None  # HEAD before the promotion
    commit: str | None = None  # the promotion commit (promoted only)
    # the mission's status the promotion commit set: "done" (a whole source promoted), else
    # None (a --change promotion, another decision, or a mission.yaml git does not track)
    mission_status: str | None = None
    note: str | None = None
    # promote's own re-judge of what it landed (uh_core/promote/recheck.py), and what the
    # operator accepted: a green judged unconfined (why), lines shaped like judge tampering
    rejudged: str | None = None  # passed | failed
    rejudge_detail: str = ""
    rejudge_isolation: str | None = None
    accepted_unconfined: str | None = None
    accepted_review: list[str] = Field(default_factory=list)
    fail_to_pass: FailToPass | None = None  # the re-judge's proof that the tests test it
    audit_event_id: str


class PromotionRecord(PromotionDecision):
    schema_version: Literal["uh.promotion.v0"] = "uh.promotion.v0"
    history: list[PromotionDecision] = Field(default_factory=list)

    def decisions(self) -> list[PromotionDecision]:
        """Every decision, oldest first, the latest last."""
        latest = PromotionDecision.model_validate(self.model_dump(exclude={"history"}))
        return [*self.history, latest]
