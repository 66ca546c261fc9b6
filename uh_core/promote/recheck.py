"""Promote checks, it does not trust: before a source lands, it is judged again.

A ledger saying green, a branch where the gate left it, a sandbox's verification record:
each is a record some process could have written after the gate (an unconfined agent's
daemon, a forged ledger, a moved branch). So ``promote`` itself, before anything lands:

1. checks that a branch's tip holds exactly the tree the gate judged, marked done
   (``tampered`` otherwise: the branch moved after the gate);
2. runs the mission's checks and its tests stage again over exactly the tree about to land,
   in pristine confined rooms (``uh_core.judge.rejudge``): a red re-judge refuses without
   ``--force``;
3. refuses a green that was judged unconfined (the gate's, or this re-judge's) without
   ``--accept-unconfined``;
4. refuses a change whose added lines have the shapes of judge tampering
   (``uh_core.judge.scan``) without ``--accept-review``.

Whatever was accepted is recorded in ``promotion.yaml``.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from uh_core.diff.capture import commits_patch
from uh_core.errors import PromotionError
from uh_core.git import common_dir
from uh_core.isolation.bwrap import resolve_mode
from uh_core.jobs.harness_job import holds_judged
from uh_core.judge.rejudge import rejudge
from uh_core.judge.scan import review_lines
from uh_core.judge.settings import Flags, load_config, resolve
from uh_core.layout import Layout
from uh_core.models.ledger import fail_to_pass_of
from uh_core.models.mission import Mission
from uh_core.models.promotion import PromotionDecision
from uh_core.promote.source import Source

_SHOWN = 3


def _tip_holds_judged(layout: Layout, mission: Mission, source: Source) -> None:
    judged = source.verified.judged_tree
    if source.kind != "branch" or judged is None or source.source_commit is None:
        return
    problem = holds_judged(mission.id, judged, source.base_commit)(
        layout.root, {}, source.source_commit
    )
    if problem is not None:
        raise PromotionError(
            f"{source.label}: TAMPERED: its tip is not the tree the gate judged "
            f"({judged[:12]} marked done): {problem}",
            fix="inspect the branch (git log -p) before anything else; run the mission again",
        )


def _review(layout: Layout, source: Source, chosen: set[str]) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="uh-promote-") as scratch:
        patch = Path(scratch) / "diff.patch"
        commits_patch(
            layout.root, source.base_commit, source.tree, patch, git_dir=common_dir(layout.root)
        )
        lines = review_lines(patch)
    return [line for line in lines if line.split(":", 1)[0] in chosen]


def recheck(
    layout: Layout,
    mission: Mission,
    source: Source,
    decision: PromotionDecision,
    *,
    accept_unconfined: bool,
    accept_review: bool,
) -> None:
    """Judge ``source`` again and refuse what may not land (see the module doc); what was
    found and accepted goes into ``decision``."""
    _tip_holds_judged(layout, mission, source)
    settings = resolve(layout, load_config(layout), Flags(jobs=1))  # judged alone
    settings = replace(settings, base_cache=False)  # the cache is a file an agent could write
    isolation = resolve_mode(settings.isolation)  # type: ignore[arg-type]
    found = rejudge(
        layout, mission, source.source_commit or source.tree, source.base_commit, settings,
        isolation,
    )  # fmt: skip
    decision.rejudged = "passed" if found.passed else "failed"
    decision.rejudge_detail = found.detail
    decision.rejudge_isolation = found.isolation
    decision.fail_to_pass = fail_to_pass_of(found.stages)
    if not found.passed and not decision.forced:
        raise PromotionError(
            f"{source.label}: judged again before landing, it is red: {found.detail}",
            fix="run the mission again, or pass --force to land it red (recorded)",
        )
    loose = source.verified.unconfined or (None if found.confined else found.isolation)
    if loose is not None:
        if not accept_unconfined:
            raise PromotionError(
                f"{source.label}: its green was judged unconfined ({loose}): the code under "
                "judgement could have forged it",
                fix="run it again with bubblewrap (--isolation bwrap), or pass "
                "--accept-unconfined (recorded)",
            )
        decision.accepted_unconfined = loose
    lines = _review(layout, source, set(decision.changes))
    if lines:
        if not accept_review:
            shown = "; ".join(lines[:_SHOWN]) + (" …" if len(lines) > _SHOWN else "")
            raise PromotionError(
                f"{source.label}: NEEDS REVIEW: {len(lines)} added line(s) that could tamper "
                f"with the judge: {shown}",
                fix="read them (p in uh, or uh-core harness report) and pass --accept-review "
                "(recorded)",
            )
        decision.accepted_review = lines
