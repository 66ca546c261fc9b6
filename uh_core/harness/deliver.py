"""A green mission's one commit on ``harness/<id>``: exactly the tree the gate judged (plus
``status: done``), on top of the value the engine last wrote to the branch.

With missions side by side another mission's agent could reach the operator's repository
between two guard windows; a branch not where the engine left it (``EngineWrites``) is
refused before the commit, and the commit's parent is checked after it: ``Moved`` ends the
attempt ``tampered`` and stops the run, nothing is built on the moved branch or repaired.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from uh_core.diff.capture import snapshot_worktree
from uh_core.errors import UhError
from uh_core.events.writer import EventLog
from uh_core.git import common_dir, resolve_commit
from uh_core.harness import workspace
from uh_core.harness.prompt import branch_name
from uh_core.models.events import SecurityTampered
from uh_core.models.ledger import AttemptRecord, RequirementRecord
from uh_core.models.mission import Mission
from uh_core.security.guard import EngineWrites

if TYPE_CHECKING:
    from uh_core.harness.deps import Deps


def commit_green(deps: Deps, mission: Mission, tree: str, attempts: int, base: str) -> str:
    """The green commit on ``harness/<id>``, on top of the value the engine last wrote
    there: a branch something else moved meanwhile (another mission's agent) is refused."""
    message = (
        f"harness: {mission.id}: {mission.display_title}\n\n"
        f"Passed the gate (agent, write-scope, verify, tests, artifacts) on attempt "
        f"{attempts} of {deps.settings.max_attempts}; status set to done.\n\n"
        f"Harness-Run: {deps.run_id}\nBase: {base}\nJudged-Tree: {tree}\n"
    )
    branch = branch_name(mission.id)
    ref = f"refs/heads/{branch}"
    engine = deps.engine or EngineWrites()
    with engine.writing():
        expected = engine.refs.get(ref)
        if expected is not None and resolve_commit(deps.layout.root, ref) != expected:
            raise Moved(f"{branch} was moved by something other than the engine")
        commit = workspace.commit_judged(deps.layout, mission.id, tree, branch, message)
        engine.ref(ref, commit)
    parent = resolve_commit(deps.layout.root, f"{commit}^")
    if expected is not None and parent != expected:
        raise Moved(f"{branch} was moved by something other than the engine (parent {parent})")
    return commit


class Moved(UhError):
    """The operator's ``harness/<id>`` is not where the engine left it."""


def deliver(
    deps: Deps, mission: Mission, worktree: Path, record: RequirementRecord, last: AttemptRecord
) -> None:
    """Commit exactly the tree the gate judged; then look at the sandbox once more and
    report (never commit) anything that changed in it since."""
    assert last.tree is not None
    try:
        record.commit = commit_green(deps, mission, last.tree, last.attempt, deps.base_commit)
        record.outcome = "pass"
    except Moved as exc:  # another mission's agent reached the operator's repository
        last.outcome, last.stage = "tampered", None
        last.tampered.append(f"ref refs/heads/{record.branch}: {exc.one_line()}")
        last.verdict = f"TAMPERED: {exc.one_line()}"
        log = EventLog(
            deps.layout.mission_events(mission.id), mission_id=mission.id, run_id=deps.run_id
        )
        log.emit(SecurityTampered(attempt=last.attempt, changes=last.tampered[-1:]))
        deps.token.cancel(f"tampered: {exc.one_line()}")
        return
    except UhError as exc:
        record.outcome, record.failing_stage = "fail", "commit"
        record.reason = f"the work passed but could not be committed: {exc.one_line()}"
        return
    try:
        now = snapshot_worktree(worktree, deps.base_commit, git_dir=common_dir(deps.layout.root))
    except UhError as exc:
        record.warnings.append(f"the sandbox could not be compared after the commit: {exc}")
        return
    if now.tree != last.tree:
        record.warnings.append(
            f"the sandbox changed after it was judged (diff {last.diff_hash} → {now.diff_hash}); "
            f"the commit holds what was judged"
        )
