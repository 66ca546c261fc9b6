"""The flaky register: a criterion whose verdict changes on the same tree is registered in
``.harness/flaky.yaml`` and counts as blocked (unobserved), never passed, until cleared.
The flaky check is driven by a counter file outside the repository: no timing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from tests.conftest import Repo
from tests.harness.conftest import Project


def _counter_check(counter: Path, fails_on: tuple[int, ...]) -> str:
    """A check command that passes except on the given runs (1-based) of itself."""
    code = (
        "import pathlib,sys; p=pathlib.Path(sys.argv[1]); "
        "n=int(p.read_text())+1 if p.exists() else 1; p.write_text(str(n)); "
        f"sys.exit(1 if n in {fails_on!r} else 0)"
    )
    return f"{sys.executable} -c '{code}' {counter}"


def test_repeat_registers_and_blocks_until_cleared(repo: Repo, tmp_path: Path) -> None:
    counter = tmp_path / "count"
    repo.mission(
        "m",
        "id: m\nacceptance_criteria:\n  - id: wobbly\n"
        f"    check_command: {json.dumps(_counter_check(counter, (2,)))}\n",
    )
    first = repo.uh("verify", "m", "--repeat", "2")
    assert first.code == 1 and first.stdout.startswith("[BLOCKED] m")
    register = yaml.safe_load((repo.root / ".harness/flaky.yaml").read_text())
    [entry] = register["entries"]
    assert register["schema_version"] == "uh.flaky.v0"
    assert entry["id"] == "m/wobbly" and entry["source"] == "repeat"
    assert entry["runs"] == ["passed", "failed"]
    assert entry["evidence"][0].endswith("verification.yaml")
    listed = json.loads(repo.uh("flaky", "list", "--json").stdout)["flaky"]
    assert [e["id"] for e in listed] == ["m/wobbly"]
    assert "m/wobbly  repeat: passed → failed" in repo.uh("flaky", "list").stdout
    # Run 3 passes, but a registered criterion is never passed: unobserved, the mission blocked.
    again = repo.uh("verify", "m", "--json")
    result = json.loads(again.stdout)
    assert again.code == 1 and result["status"] == "blocked"
    [ac] = result["acceptance_criteria"]
    assert ac["status"] == "unobserved" and ac["flaky"] is True and ac["runs"] == ["passed"]
    assert any(f["code"] == "ac_flaky" for f in result["findings"])
    assert repo.uh("flaky", "clear", "m/nope").code == 2  # an unknown id is bad input
    cleared = repo.uh("flaky", "clear", "m/wobbly")
    assert cleared.code == 0 and "cleared m/wobbly" in cleared.stdout
    assert repo.uh("verify", "m").code == 0  # run 4 passes and counts again
    assert repo.uh("flaky", "list").stdout.strip() == "no flaky criteria registered"


def test_two_rounds_on_the_same_tree_with_different_verdicts_register_it(
    project: Project, tmp_path: Path
) -> None:
    counter = tmp_path / "count"
    mission = project.root / ".harness/missions/calc/mission.yaml"
    mission.write_text(
        mission.read_text().replace(
            "tests:\n",
            "  - id: wobbly\n"
            f"    check_command: {json.dumps(_counter_check(counter, (1,)))}\ntests:\n",
        )
    )
    project.repo.commit("a flaky criterion")
    before = project.snapshot()
    # Round 1 writes the fix: wobbly fails. Round 2 changes nothing: wobbly passes on the same
    # tree. That is a verdict that changed on one tree: registered, and the round is not green.
    agent = project.agent("steady", 'write("src/calc.py", GOOD)\n')
    # unconfined: the check counts its runs in a file outside the judge's room, which a
    # confined check could not write (its /tmp is its own)
    result, data = project.run_json("--agent", agent, "--max-attempts", "3", "--isolation", "none")
    assert result.code == 1, result.stderr
    assert project.snapshot() == before  # the register is ignored state, like the ledgers
    [req] = data["requirements"]
    assert req["outcome"] == "blocked" and req["handover"]["code"] == "no_progress"
    assert len(req["attempts"]) == 2
    verify = next(s for s in req["attempts"][1]["stages"] if s["stage"] == "verify")
    assert verify["passed"] is False and verify["evidence"]["criteria"]["wobbly"] == "unobserved"
    [found] = [f for f in req["findings"] if f["code"] == "flaky_registered"]
    assert "calc/wobbly (failed → passed)" in found["message"]
    register = yaml.safe_load((project.root / ".harness/flaky.yaml").read_text())
    [entry] = register["entries"]
    assert entry["id"] == "calc/wobbly" and entry["source"] == "re-verify"
    assert entry["tree"] == req["attempts"][1]["tree"]


def test_the_register_has_a_schema() -> None:
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "uh_core", "schema", "flaky"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert '"FlakyEntry"' in out and '"uh.flaky.v0"' in out
