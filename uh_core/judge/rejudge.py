"""Judging a commit again, from nothing but the object store: what ``promote`` and the Ray
head do before they trust a record that says green.

A ledger, a branch, a worker's verdict are records an unconfined process could have written
after the gate. So before anything lands, the protected and judge files are compared with the
base commit (``write-scope``, from the object store), and the mission's checks (the
``verify`` stage) and the test suite (the ``tests`` stage) run once more over exactly the
commit about to land,
each in a pristine room of its own, confined as the gate's were. The records this writes
live in the state folder (``rejudge/``), never in the operator's ``.harness/``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from uh_core.clock import new_run_id
from uh_core.diff.capture import commits_patch
from uh_core.diff.patch_paths import scan_file
from uh_core.git import common_dir, git
from uh_core.isolation.bwrap import Resolved
from uh_core.judge.context import GateContext
from uh_core.judge.gate import run_gate
from uh_core.judge.settings import Settings
from uh_core.judge.stages import tests, verify, write_scope
from uh_core.layout import Layout
from uh_core.models.ledger import StageResult
from uh_core.models.mission import Mission

# write-scope first (from the object store alone: a commit that changed the judge or a
# protected file is refused before anything of it runs), then the checks and the tests
STAGES = (
    ("write-scope", write_scope.committed),
    ("verify", verify.check),
    ("tests", tests.check),
)


@dataclass
class Rejudged:
    """The verdict of a re-judge: ``passed`` only when every stage passed."""

    passed: bool
    tree: str
    confined: bool
    detail: str
    isolation: str
    stages: list[StageResult] = field(default_factory=list)


def rejudge(
    layout: Layout,
    mission: Mission,
    commit: str,
    base_commit: str,
    settings: Settings,
    isolation: Resolved,
) -> Rejudged:
    """Run the mission's checks and its tests stage over ``commit`` (a commit or tree id in
    the operator's store), in pristine confined rooms; never raises for a red verdict."""
    git_dir = common_dir(layout.root)
    tree = git(layout.root, "rev-parse", "--verify", f"{commit}^{{tree}}").strip()
    run_id = new_run_id("rejudge")
    records = Layout(layout.root, records=layout.state_dir / "rejudge" / run_id)
    evidence = records.mission_dir(mission.id) / "runs" / run_id / "rejudge"
    evidence.mkdir(parents=True, exist_ok=True)
    patch = evidence / "diff.patch"
    commits_patch(layout.root, base_commit, tree, patch, git_dir=git_dir)
    ctx = GateContext(
        layout, records, mission, settings, evidence, f"harness/{mission.id}", base_commit,
        run_id, 0, evidence, patch, scan_file(patch).paths, git_dir, tree, isolation,
    )  # fmt: skip
    stages = run_gate(ctx, stages=STAGES)
    passed = len(stages) == len(STAGES) and all(s.passed for s in stages)
    note = "confined: bwrap" if isolation.mode == "bwrap" else isolation.note or "unconfined"
    # a stage with nothing to run passes, and says so: "every stage passed" alone would
    # read as tests run when no test command was configured
    unjudged = [f"{s.stage}: {s.detail}" for s in stages if s.evidence.get("source") == "none"]
    detail = (
        "every stage passed" + (f" ({'; '.join(unjudged)})" if unjudged else "")
        if passed
        else "; ".join(f"{s.stage}: {s.detail}" for s in stages if not s.passed)
    )
    return Rejudged(passed, tree, isolation.mode == "bwrap", detail, note, stages)
