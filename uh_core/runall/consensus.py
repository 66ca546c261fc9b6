"""The consensus patch of a divergent run-all: more than picking a winner.

When the runtimes that succeeded made different diffs, their hunks are compared
(runall/hunks.py: by file and what they change, never by position or whitespace). The hunks
that at least ``agree_min`` of them made (default: a majority of those that succeeded) form
``runtime-consensus.patch`` in the mission's ``runs/`` folder. It is applied to the base in a
sandbox of its own (runtime ``consensus``) and verified like any runtime's result —
``verify --sandbox``, in-process, confined as every check — so ``promote --sandbox`` takes it
like any other. A
consensus that does not apply (hunks that overlap, or git refusing it) or that fails its
verification is said, with why, and stays a record, never a green.
"""

from __future__ import annotations

import time
from pathlib import Path

from uh_core.errors import UhError
from uh_core.fileio import write_text_atomic
from uh_core.git import git_run
from uh_core.layout import Layout
from uh_core.models.comparison import Comparison, Consensus, ConsensusHunk
from uh_core.models.mission import Mission
from uh_core.runall.hunks import Hunk, hunks_of, render, tally
from uh_core.sandbox.worktree import create_sandbox, entry_path, get_sandbox, sandbox_records

RUNTIME = "consensus"  # the consensus sandbox's runtime: sbx-<mission>-consensus-<time>


def majority(considered: int) -> int:
    return considered // 2 + 1


def _shown(hunk: Hunk) -> ConsensusHunk:
    return ConsensusHunk(
        file=hunk.file, at=hunk.source_start, changed=hunk.changed, runtimes=hunk.runtimes
    )


def build(
    layout: Layout, mission: Mission, comparison: Comparison, agree_min: int | None
) -> Consensus:
    """The consensus of ``comparison``'s succeeded runtimes, applied and verified."""
    started = time.monotonic()
    rows = [r for r in comparison.runtimes if r.status == "succeeded" and r.sandbox]
    considered = [r.runtime for r in rows]
    if comparison.status != "divergent" or len(rows) < 2:
        why = (
            "every runtime that succeeded made the same diff: any of their sandboxes is it"
            if comparison.status == "agreement"
            else "fewer than two runtimes succeeded: nothing to combine"
        )
        return Consensus(status="not_built", detail=why, considered=considered)
    need = agree_min if agree_min is not None else majority(len(rows))
    per_runtime: dict[str, list[Hunk]] = {}
    try:
        for row in rows:
            records = sandbox_records(layout, get_sandbox(layout, str(row.sandbox)))
            per_runtime[row.runtime] = hunks_of(records.diff_file(mission.id), row.runtime)
    except UhError as exc:
        return Consensus(status="error", detail=exc.one_line(), considered=considered)
    every = tally(per_runtime)
    chosen = [h for h in every if len(h.runtimes) >= need]
    disputed = [h for h in every if len(h.runtimes) < need]
    found = Consensus(
        status="empty", agree_min=need, considered=considered,
        hunks=[_shown(h) for h in chosen], disputed=[_shown(h) for h in disputed],
    )  # fmt: skip
    if not chosen:
        found.detail = f"no hunk was made by {need} of the {len(rows)} runtimes that succeeded"
        found.duration_ms = _ms(started)
        return found
    text, conflicts = render(chosen)
    # under runs/: git-ignored in every project uh-core init made, old or new (a file beside
    # runtime-comparison.json would leave an older project's checkout dirty)
    patch = layout.mission_dir(mission.id) / "runs" / "runtime-consensus.patch"
    write_text_atomic(patch, text)
    found.patch = layout.rel(patch)
    found.duration_ms = _ms(started)
    if conflicts:
        found.status = "conflict"
        found.detail = "the consensus does not apply: " + "; ".join(conflicts[:5])
        return found
    _apply_and_verify(layout, mission, comparison.base_commit or "HEAD", patch, found)
    return found


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def _apply_and_verify(
    layout: Layout, mission: Mission, base: str, patch: Path, found: Consensus
) -> None:
    from uh_core.judge.in_sandbox import verify_in_sandbox
    from uh_core.runtime.run import diff_summary
    from uh_core.sandbox.worktree import discard_sandbox
    from uh_core.verify.runner import VerifyOptions

    entry = create_sandbox(layout, mission.id, RUNTIME, base=base)
    worktree = entry_path(layout, entry)
    applied = git_run(worktree, "apply", "--whitespace=nowarn", str(patch))
    if applied.returncode != 0:
        why = applied.stderr.decode("utf-8", "replace").strip().splitlines()
        found.status = "conflict"
        found.detail = f"the consensus does not apply to the base: {why[-1] if why else '?'}"
        discard_sandbox(layout, entry.id)
        return
    records = sandbox_records(layout, entry)
    diff_summary(layout, worktree, records.diff_file(mission.id), entry.base_commit)
    found.sandbox = entry.id
    started = time.monotonic()
    result = verify_in_sandbox(layout, mission, entry.id, VerifyOptions())
    found.verify_ms = _ms(started)
    found.verification = result.status
    if result.status == "passed":
        found.status = "verified"
        found.detail = f"applied and verified in {entry.id}"
    else:
        found.status = "failed"
        red = [c.id for c in result.acceptance_criteria if c.status != "passed"][:5]
        found.detail = f"applied in {entry.id}, but its verification is {result.status}" + (
            f": {', '.join(red)}" if red else ""
        )
