"""``harness plan`` lists every reason ``harness run`` would refuse to start, in the run's own
words; ``init`` and ``mission new`` say what to commit next."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import Repo, git
from tests.harness.conftest import PY

AC = f'acceptance_criteria:\n  - id: ok\n    check_command: {PY} -c "pass"\n'
AGENT = "true {prompt_file}"


def _plan(repo: Repo, *args: str) -> dict[str, Any]:
    result = repo.uh("harness", "plan", "--format", "json", *args)
    assert result.code == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _refusal(repo: Repo) -> str:
    """The line ``harness run`` refuses with (it starts nothing)."""
    result = repo.uh("harness", "run", "--agent", AGENT, "--isolation", "none")
    assert result.code == 2, result.stderr
    return result.stderr


def test_plan_says_what_refuses_the_run_and_the_run_says_the_same(repo: Repo) -> None:
    repo.mission("calc", f"id: calc\ntitle: Calc\n{AC}")  # not committed
    repo.write("notes.txt", "scratch\n")
    data = _plan(repo, "--agent", AGENT)
    assert data["can_run"] is False
    assert [b["code"] for b in data["run_blockers"]] == ["uncommitted_changes"]
    blocker = data["run_blockers"][0]
    assert ".harness/missions/calc/mission.yaml" in blocker["message"]
    assert "notes.txt" in blocker["message"] and blocker["fix"]
    refused = _refusal(repo)
    assert blocker["message"] in refused and blocker["fix"] in refused
    # the mission itself is ready; the text plan says the run is not
    assert data["missions"][0]["ready"] is True
    text = repo.uh("harness", "plan", "--agent", AGENT).stdout
    assert text.startswith("`harness run` would refuse to start:\n    uncommitted_changes: ")
    assert "1 of 1 mission(s) ready, but `harness run` refuses to start" in text
    # committed: nothing refuses the run, and the plan says plainly it is ready
    repo.commit("missions")
    data = _plan(repo, "--agent", AGENT)
    assert data["run_blockers"] == [] and data["can_run"] is True
    text = repo.uh("harness", "plan", "--agent", AGENT).stdout
    assert "would refuse" not in text and text.endswith("1 of 1 mission(s) ready\n")


def test_plan_lists_every_refusal_at_once(repo: Repo) -> None:
    repo.mission("calc", f"id: calc\n{AC}")
    repo.commit("missions")
    # generated paths no longer ignored, an uncommitted change, and no agent at all
    (repo.root / ".harness/.gitignore").write_text("# emptied\n", encoding="utf-8")
    data = _plan(repo)
    codes = [b["code"] for b in data["run_blockers"]]
    assert codes == ["no_agent", "uncommitted_changes", "generated_not_ignored"]
    for blocker in data["run_blockers"]:
        assert blocker["message"] and blocker["fix"], blocker
    # the run refuses for the first, in the same words
    first = data["run_blockers"][0]
    result = repo.uh("harness", "run", "--isolation", "none")
    assert result.code == 2 and first["message"] in result.stderr
    # an agent runtime that cannot run here is the run's refusal too
    data = _plan(repo, "--runtime", "no-such-runtime")
    assert "no_agent" not in [b["code"] for b in data["run_blockers"]]
    assert "agent_unavailable" in [b["code"] for b in data["run_blockers"]]


def test_plan_outside_a_repository(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    uh = [sys.executable, "-m", "uh_core"]
    subprocess.run([*uh, "init", "--root", str(root)], check=True, capture_output=True)
    found = subprocess.run(
        [*uh, "harness", "plan", "--json", "--agent", AGENT, "--root", str(root)],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(found.stdout)
    assert [b["code"] for b in data["run_blockers"]] == ["no_base_commit"]
    assert "not a git repository" in data["run_blockers"][0]["message"]
    assert "git init" in data["run_blockers"][0]["fix"]


def test_branch_exists_is_said_the_same_by_plan_and_run(repo: Repo) -> None:
    repo.mission("calc", f"id: calc\n{AC}")
    repo.commit("missions")
    git(repo.root, "branch", "harness/calc")
    blocker = _plan(repo, "--agent", AGENT)["missions"][0]["blockers"][0]
    assert blocker["code"] == "branch_exists"
    result = repo.uh("harness", "run", "--agent", AGENT, "--isolation", "none", "--json")
    reason = json.loads(result.stdout)["requirements"][0]["reason"]
    assert reason == f"{blocker['message']} (fix: {blocker['fix']})"


def test_init_and_mission_new_say_what_to_commit_next(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    uh = [sys.executable, "-m", "uh_core"]

    def run(*args: str) -> str:
        done = subprocess.run(
            [*uh, *args, "--root", str(root)], capture_output=True, text=True, check=True
        )
        return done.stdout

    out = run("init")
    assert "next: git add .harness/ && git commit -m 'uh: init'" in out
    assert "uh-core mission new ID" in out
    out = run("mission", "new", "calc", "--title", "Calc", "--criterion", "ok::true")
    assert "next: git add .harness/ && git commit -m 'mission calc'" in out
    assert "uh-core verify calc" in out and "uh-core harness run --req calc" in out
    git(root, "add", ".harness")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "m")
    out = run("init")
    assert "git add" not in out and "next: uh-core mission new" in out
    data = json.loads(run("mission", "new", "two", "--title", "Two", "--json"))
    assert data["next"][0].startswith("git add .harness/")
