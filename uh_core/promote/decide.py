"""``promote(layout, request)``: one decision, in the order a user fixes things.

1. input: ids, approver, decision, flags (exit 2 before anything is read);
2. the mission, an earlier promotion.yaml that must still parse, the source, ``--change``;
3. ``promoted`` only: the verification (``--force`` when it did not pass), the main checkout
   (top level, on a branch, clean), the candidate, the three-way merge (conflicts named);
4. the commit, then promotion.yaml and ``promotion.recorded``.

Every refusal happens before step 4 and leaves everything as it was.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from uh_core.clock import new_run_id, timestamp
from uh_core.diff.capture import capture_mission_diff
from uh_core.errors import PromotionError, UhError, UsageError
from uh_core.harness.done import done_tree
from uh_core.ids import check_id
from uh_core.layout import Layout
from uh_core.missions import load_mission
from uh_core.models.mission import Mission
from uh_core.models.promotion import Decision, PromotionDecision, PromotionRecord
from uh_core.promote import apply, changes, journal
from uh_core.promote.recheck import recheck
from uh_core.promote.record import emit_recorded, promotion_lock, read_promotion, write_decision
from uh_core.promote.source import Source, resolve

DECISIONS: tuple[Decision, ...] = ("promoted", "rejected", "deferred")


@dataclass
class PromotionRequest:
    mission_id: str
    approved_by: str
    decision: Decision = "promoted"
    sandbox_id: str | None = None
    branch: str | None = None
    changes: list[str] = field(default_factory=list)
    force: bool = False
    note: str | None = None
    auto: bool = False
    accept_unconfined: bool = False  # land a green judged unconfined (recorded)
    accept_review: bool = False  # land lines shaped like judge tampering (recorded)


def _check_request(request: PromotionRequest) -> None:
    check_id(request.mission_id, "mission")
    if request.sandbox_id is not None:
        check_id(request.sandbox_id, "sandbox")
    if request.decision not in DECISIONS:
        raise UsageError(
            f"unknown decision {request.decision!r}", fix=f"use one of {', '.join(DECISIONS)}"
        )
    name = request.approved_by
    if not name.strip() or any(ord(c) < 32 or ord(c) == 127 for c in name) or len(name) > 200:
        raise UsageError(
            f"--approved-by {name!r}: a name on one line is required (at most 200 characters)",
            fix="--approved-by 'Ada Lovelace'",
        )


def _proof_trailers(decision: PromotionDecision) -> list[str]:
    """``Uh-Fail-To-Pass: 3`` and its two companions, from promote's own re-judge."""
    proof = decision.fail_to_pass
    if proof is None:
        return []
    if proof.problem:
        return [f"Uh-Fail-To-Pass: none ({' '.join(proof.problem.split())[:120]})"]
    allowed = " (allowed)" if proof.vacuous and proof.allow_passing_at_base else ""
    return [
        f"Uh-Fail-To-Pass: {len(proof.fail_to_pass)}",
        f"Uh-Pass-To-Pass: {len(proof.pass_to_pass)}",
        f"Uh-Vacuous: {len(proof.vacuous)}{allowed}",
    ]


def message(mission: Mission, source: Source, decision: PromotionDecision) -> str:
    """The promotion commit's message: what, from where, verified how, approved by whom."""
    status = decision.verification_status
    forced = " (promoted with --force)" if decision.forced else ""
    limited = ""
    if decision.change_filter:
        limited = f", limited by --change {' '.join(decision.change_filter)}"
    lines = [
        f"promote {mission.id}: {source.label}",
        "",
        f"Mission: {mission.id} ({mission.display_title})",
        f"Source: {source.label}, base {source.base_commit[:12]}, diff {source.diff_hash}",
        f"Verification: {status}{forced} ({source.verified.detail})",
        f"Changes: {len(decision.changes)} path(s){limited}",
    ]
    if decision.mission_status:
        lines.append(f"Mission status: {decision.mission_status}")
    if decision.note:
        lines.append(f"Note: {' '.join(decision.note.split())}")
    lines += [
        "",
        f"Uh-Mission: {mission.id}",
        f"Uh-Source: {source.label}",
        f"Uh-Verification: {status}{' (forced)' if decision.forced else ''}",
        *_proof_trailers(decision),
        *source.verified.human,
        f"Approved-by: {decision.approved_by.strip()}",
        f"Uh-Promotion: {decision.audit_event_id}",
    ]
    return "\n".join(lines) + "\n"


def _apply(
    layout: Layout,
    mission: Mission,
    source: Source,
    decision: PromotionDecision,
    entries: list[apply.Entry],
    *,
    accept_unconfined: bool = False,
    accept_review: bool = False,
) -> None:
    if source.verified.status == "passed":
        decision.forced = False
    elif not decision.forced:
        again = (
            f"uh-core verify {mission.id} --sandbox {source.sandbox_id}"
            if source.kind == "sandbox"
            else f"uh-core harness run --req {mission.id} --resume"
        )
        raise PromotionError(
            f"{source.label}: its verification is {source.verified.status} "
            f"({source.verified.detail}); promoting it needs --force",
            fix=f"verify it ({again}) or pass --force",
        )
    head = apply.current_head(layout)
    apply.require_clean(layout)
    if not entries:
        raise PromotionError(
            f"{source.label} changes nothing against its base {source.base_commit[:12]}",
            fix="there is nothing to promote; record it as rejected or deferred instead",
        )
    recheck(
        layout, mission, source, decision,
        accept_unconfined=accept_unconfined, accept_review=accept_review,
    )  # fmt: skip
    proposed = apply.candidate(layout.root, source.base_commit, entries, f"candidate {mission.id}")
    tree = apply.merge_onto(layout.root, head, proposed, source.label)
    if tree == head.tree:
        raise PromotionError(
            f"nothing to apply: {head.branch} already has the changes of {source.label}",
            fix="record it as rejected or deferred if a decision is still wanted",
        )
    if not decision.change_filter:  # the whole source: the mission is delivered here
        tree, tracked = done_tree(layout.root, tree, mission.id)
        decision.mission_status = "done" if tracked else None
    decision.onto_branch, decision.parent_commit = head.branch, head.commit
    text = message(mission, source, decision)
    decision.commit = apply.make_commit(layout.root, head, tree, text)
    journal.begin(layout, decision, head.commit, decision.commit)  # see journal.py
    journal.pause("journaled")
    try:
        apply.move_branch(layout.root, head, decision.commit, text)
    except UhError:
        journal.clear(layout)  # the branch never moved: nothing landed
        raise
    journal.pause("moved")
    journal.checkout(layout.root, head.commit, decision.commit)
    journal.pause("checked-out")
    # The mission's diff on this branch is now the promoted change (verify's TDD gate reads
    # it); evidence only: if it cannot be written, `uh-core diff capture ID --base` makes it.
    with contextlib.suppress(UhError, OSError):
        capture_mission_diff(layout, mission.id, base=head.commit)


def promote(layout: Layout, request: PromotionRequest) -> PromotionRecord:
    """Record ``request``'s decision (and, for ``promoted``, make its one commit)."""
    _check_request(request)
    mission = load_mission(layout, request.mission_id).mission
    with promotion_lock(layout):
        journal.recover(layout)  # an interrupted promotion first (the CLI says what it did)
        previous = read_promotion(layout, mission.id)  # a broken file refuses, before any change
        source = resolve(layout, mission.id, request.sandbox_id, request.branch)
        found = apply.changed_entries(
            layout.root, source.base_commit, source.tree, source.exclude_harness
        )
        paths, filters = changes.select([e.path for e in found], request.changes, layout.root)
        chosen = set(paths)
        entries = [e for e in found if e.path in chosen]
        decision = PromotionDecision(
            mission_id=mission.id,
            decision=request.decision,
            approved_by=request.approved_by.strip(),
            promoted_at=timestamp(),
            source=source.kind,
            sandbox_id=source.sandbox_id,
            branch=source.branch,
            runtime=source.runtime,
            base_commit=source.base_commit,
            source_commit=source.source_commit,
            source_tree=source.tree,
            diff_hash=source.diff_hash,
            changes=paths,
            change_filter=filters,
            verification_status=source.verified.status,
            verification_run_id=source.verified.run_id,
            verification_detail=source.verified.detail,
            forced=request.force and request.decision == "promoted",
            auto=request.auto,
            note=request.note,
            audit_event_id=new_run_id("promotion"),
        )
        if request.decision == "promoted":
            _apply(
                layout, mission, source, decision, entries,
                accept_unconfined=request.accept_unconfined, accept_review=request.accept_review,
            )  # fmt: skip
        record = write_decision(layout, decision, previous)
        emit_recorded(layout, record)
        journal.clear(layout)
    return record
