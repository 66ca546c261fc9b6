"""Missions side by side (``harness run --jobs 2``) and the guard: the engine's own writes
for one mission are not another's tampering — and an agent reaching another running
mission's branch or files still is (docs/security.md, "Missions side by side").

The attacks run unconfined (``--isolation none``): under bubblewrap the operator's
repository is read-only and they could not happen at all.
"""

from __future__ import annotations

import pytest

from tests.conftest import git
from tests.harness.conftest import Project
from tests.harness.test_parallel import _agent, _by_id, _missions
from tests.security.conftest import MODES
from uh_core.security.change import TamperChange
from uh_core.security.guard import EngineWrites

# beta's agent keeps beta's window open until alpha's agent has done its deed.
BETA_WAITS = 'if mid == "beta":\n    wait_for("alpha.done")\n'


def _attack(project: Project, deed: str) -> str:
    return _agent(
        project,
        'if mid == "alpha":\n'
        '    wait_for("beta.started")\n'
        f"    root = {str(project.root)!r}\n"
        + deed
        + '    (marks / "alpha.done").write_text("")\n'
        + BETA_WAITS,
    )


def test_an_agent_moving_another_running_missions_branch_is_tampering(
    project: Project,
) -> None:
    _missions(project, ("alpha", ()), ("beta", ()))
    base = git(project.root, "rev-parse", "HEAD").strip()
    agent = _attack(
        project,
        "    evil = subprocess.run(['git', '-C', root, 'commit-tree', 'HEAD^{tree}', '-p',\n"
        "        'HEAD', '-m', 'evil'], capture_output=True, text=True, check=True).stdout\n"
        "    subprocess.run(['git', '-C', root, 'update-ref', 'refs/heads/harness/beta',\n"
        "        evil.strip()], check=True)\n",
    )
    result, data = project.run_json("--agent", agent, "--jobs", "2", "--isolation", "none")
    assert result.code == 1, result.stderr
    assert data["status"] == "tampered"
    named = [t for t in data["tampered"] if "ref refs/heads/harness/beta" in t]
    assert any(t.startswith("alpha attempt 1: ") for t in named), data["tampered"]
    beta = _by_id(data)["beta"]
    assert beta["outcome"] != "pass" and beta["commit"] is None
    # Nothing repaired, nothing built on it: harness/beta is where the agent put it.
    tip = git(project.root, "rev-parse", "harness/beta").strip()
    assert tip != base and git(project.root, "log", "-1", "--format=%s", tip).strip() == "evil"


def test_an_agent_writing_in_another_missions_folder_is_tampering(project: Project) -> None:
    _missions(project, ("alpha", ()), ("beta", ()))
    agent = _attack(
        project,
        "    pathlib.Path(root, '.harness/missions/beta/evil.txt').write_text('x')\n",
    )
    result, data = project.run_json("--agent", agent, "--jobs", "2", "--isolation", "none")
    assert result.code == 1, result.stderr
    assert data["status"] == "tampered"
    assert any(
        t.startswith("alpha attempt 1: harness-file .harness/missions/beta/evil.txt")
        for t in data["tampered"]
    ), data["tampered"]


@pytest.mark.parametrize("mode", MODES)
def test_honest_missions_side_by_side_are_not_tampering(project: Project, mode: str) -> None:
    """Each guard's window sees the other mission's branch created and moved, its prompt
    archived, its sandbox recorded, the ledger rewritten: all the engine's, none flagged."""
    from uh_core.isolation import bwrap_available

    if mode == "bwrap" and not bwrap_available():
        pytest.skip("bubblewrap does not work here")
    _missions(project, ("alpha", ()), ("beta", ()), ("gamma", ()))
    # alpha stays in its window until beta and gamma have ended (green commits, ledger).
    agent = _agent(
        project,
        'if mid == "alpha":\n    wait_for("beta.ended")\n    wait_for("gamma.ended")\n'
        'else:\n    wait_for("alpha.started")\n',
    )
    result, data = project.run_json("--agent", agent, "--jobs", "3", "--isolation", mode)
    assert result.code == 0, result.stderr
    assert data["tampered"] == [] and data["status"] == "completed"
    assert {r["outcome"] for r in data["requirements"]} == {"pass"}


def test_the_engine_registry_accepts_exactly_what_the_engine_wrote() -> None:
    engine = EngineWrites()
    ref = "refs/heads/harness/beta"
    engine.ref(ref, "a" * 40)
    assert engine.owns(TamperChange("ref", ref, None, "a" * 40))
    assert not engine.owns(TamperChange("ref", ref, "a" * 40, "b" * 40))  # moved elsewhere
    assert not engine.owns(TamperChange("ref", ref, "a" * 40, None))  # deleted
    assert not engine.owns(TamperChange("ref", "refs/heads/main", None, "a" * 40))
    engine.ref(ref, "b" * 40)  # the engine moved it on: only the latest value is its
    assert not engine.owns(TamperChange("ref", ref, None, "a" * 40))
    # The same value under another kind is not the engine's either.
    assert not engine.owns(TamperChange("harness-file", ref, None, "b" * 40))


def test_force_beside_a_running_mission_is_the_engines_own(project: Project) -> None:
    """--force deletes gamma's branch and discards its sandbox while alpha's window is open
    (gamma starts only when beta's slot frees): the engine's, so not tampering."""
    _missions(project, ("alpha", ()), ("beta", ()), ("gamma", ()))
    first = _agent(project)
    result, data = project.run_json("--agent", first, "--jobs", "3")
    assert result.code == 0, result.stderr
    for mark in (project.agents / "marks").iterdir():
        mark.unlink()
    agent = _agent(project, 'if mid == "alpha":\n    wait_for("gamma.ended")\n')
    result, data = project.run_json("--agent", agent, "--jobs", "2", "--force")
    assert result.code == 0, result.stderr
    assert data["tampered"] == [] and data["status"] == "completed"
    alpha, gamma = _by_id(data)["alpha"], _by_id(data)["gamma"]
    assert gamma["started_at"] > alpha["attempts"][0]["started_at"]  # inside alpha's window


def test_the_green_commit_is_refused_on_a_branch_the_engine_did_not_leave_there(
    project: Project,
) -> None:
    from uh_core.harness.config import Flags
    from uh_core.harness.deliver import Moved
    from uh_core.harness.deliver import commit_green as _commit
    from uh_core.harness.loop import HarnessRun
    from uh_core.harness.prepare import prepare
    from uh_core.layout import Layout

    runner = HarnessRun(prepare(Layout(project.root), Flags(agent="true {prompt_file}")))
    deps, engine = runner.deps, runner.deps.engine
    assert engine is not None
    mission = runner.prepared.selection.missions[0].mission
    base = git(project.root, "rev-parse", "HEAD").strip()
    tree = git(project.root, "rev-parse", "HEAD^{tree}").strip()
    ref = f"refs/heads/harness/{mission.id}"
    git(project.root, "update-ref", ref, base)
    engine.ref(ref, base)
    evil = git(project.root, "commit-tree", tree, "-p", base, "-m", "evil").strip()
    git(project.root, "update-ref", ref, evil)
    with pytest.raises(Moved):
        _commit(deps, mission, tree, 1, base)
    assert git(project.root, "rev-parse", ref).strip() == evil  # nothing built on it
    git(project.root, "update-ref", ref, base)  # where the engine left it: committed
    commit = _commit(deps, mission, tree, 1, base)
    assert git(project.root, "rev-parse", f"{commit}^").strip() == base
    assert engine.refs[ref] == commit


def test_a_moved_branch_at_delivery_ends_the_attempt_tampered_and_stops_the_run(
    project: Project,
) -> None:
    from uh_core.harness.config import Flags
    from uh_core.harness.deliver import deliver
    from uh_core.harness.loop import HarnessRun
    from uh_core.harness.prepare import prepare
    from uh_core.layout import Layout
    from uh_core.models.ledger import AttemptRecord, RequirementRecord

    runner = HarnessRun(prepare(Layout(project.root), Flags(agent="true {prompt_file}")))
    deps = runner.mission_deps(runner.prepared.selection.missions[0].mission)
    mission = runner.prepared.selection.missions[0].mission
    base = git(project.root, "rev-parse", "HEAD").strip()
    tree = git(project.root, "rev-parse", "HEAD^{tree}").strip()
    ref = f"refs/heads/harness/{mission.id}"
    assert deps.engine is not None
    deps.engine.ref(ref, base)
    evil = git(project.root, "commit-tree", tree, "-p", base, "-m", "evil").strip()
    git(project.root, "update-ref", ref, evil)
    record = RequirementRecord(mission_id=mission.id, branch=f"harness/{mission.id}")
    last = AttemptRecord(attempt=1, started_at="x", outcome="pass", tree=tree)
    deliver(deps, mission, project.root, record, last)
    assert last.outcome == "tampered" and record.commit is None
    assert last.tampered and ref in last.tampered[0]
    assert (runner.token.reason or "").startswith("tampered: harness/")
    events = project.events(f".harness/missions/{mission.id}/events.ndjson")
    assert events[-1]["event"] == "security.tampered"
