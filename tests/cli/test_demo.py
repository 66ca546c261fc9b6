"""``uh-core demo``: the offline main job builds, verifies, and refuses to clobber; its
committed harness configuration and scripted agent make ``harness run`` (``h`` in ``uh``)
pass one mission and fail others, offline, on a tree left clean."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Repo, git

ROOT = Path(__file__).resolve().parents[2]


def _demo(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uh_core", "demo", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )


@dataclass
class Built:
    result: subprocess.CompletedProcess[str]
    root: Path

    def copy(self, to: Path) -> Path:
        """The built demo, copied whole (its git repository with it) for a test to change."""
        shutil.copytree(self.root, to, symlinks=True)
        return to


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """``uh-core demo DIR --json`` run once for this module (its sandboxes in a state folder
    of their own): the tests read its answer and work on copies of what it built."""
    folder = tmp_path_factory.mktemp("demo-built")
    env = {**os.environ, "UH_STATE_DIR": str(folder / "state")}
    return Built(_demo(str(folder / "d"), "--json", cwd=folder, env=env), folder / "d")


def test_demo_builds_and_verifies(built: Built, tmp_path: Path) -> None:
    result = built.result
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["missions"] == {
        "add-subtract": "passed",
        "divide": "failed",
        "changelog": "blocked",
        "mean": "failed",
    }
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=built.root, capture_output=True, text=True
    ).stdout
    assert status == ""
    # a newcomer's first `mission validate`: every mission valid for both tools (--strict:
    # none the TypeScript uh rejects), one intended warning (a criterion for a person)
    checked = Repo(built.root).uh("mission", "validate", "--strict")
    assert checked.code == 0 and checked.stdout.count("ok ") == 4, checked.stderr
    assert "TypeScript" not in checked.stderr and checked.stderr.count("warning:") == 1
    assert "maintainer-review" in checked.stderr
    again = _demo(str(built.copy(tmp_path / "d")), cwd=tmp_path)  # an earlier demo: rebuilt
    assert again.returncode == 0 and "Look next:" in again.stdout
    # the README's sample: the total names the criterion uh added to divide's own three
    total = "1 blocked (total 4, 1 of them uh's: ac-tdd-tests-precede-code)\n"
    assert total in again.stdout and total in (ROOT / "README.md").read_text()
    assert "uh-core: rebuilt the earlier demo in " in again.stderr, again.stderr


def test_demo_refuses_a_foreign_directory(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "precious.txt").write_text("keep me")
    result = _demo(str(target), cwd=tmp_path)
    assert result.returncode == 2
    assert "not empty and is not a uh demo" in result.stderr
    assert (target / "precious.txt").read_text() == "keep me"


def _clean(root: Path) -> bool:
    return git(root, "status", "--porcelain", "--untracked-files=all") == ""


def _requirements(stdout: str) -> dict[str, dict[str, Any]]:
    ledger = json.loads(stdout)
    return {r["mission_id"]: r for r in ledger["requirements"]}


def test_the_demo_harness_passes_one_mission_and_fails_the_others(
    built: Built, tmp_path: Path
) -> None:
    assert built.result.returncode == 0, built.result.stderr
    demo = Repo(built.copy(tmp_path / "d"))
    tracked = git(demo.root, "ls-files").split()
    assert "harness.config.yaml" in tracked and "agents/scripted_agent.py" in tracked

    run = demo.uh("harness", "run", "--format", "json")  # the config's agent: what `h` runs
    assert run.code == 1, run.stderr  # a mission failed
    outcome = _requirements(run.stdout)
    assert {m: r["outcome"] for m, r in outcome.items()} == {
        "divide": "pass",
        "changelog": "blocked",  # rounds ended red: handed over to a human
        "mean": "blocked",
    }
    divide, mean, changelog = outcome["divide"], outcome["mean"], outcome["changelog"]
    assert len(divide["attempts"]) == 1 and divide["commit"]
    # mean: code without tests, then (told by the gate) a test that misses the empty list
    assert mean["failing_stage"] == "verify" and len(mean["attempts"]) == 2
    first, second = mean["attempts"]
    assert "no test" in first["failure_output"]
    assert "tests/test_mean.py" in second["files_changed"]
    assert "ZeroDivisionError" in second["failure_output"]
    assert [f["ac_id"] for f in mean["findings"]] == ["empty-message"]
    # changelog: the maintainer's sign-off is a criterion nothing can check
    assert changelog["failing_stage"] == "verify"
    assert mean["handover"]["code"] == "rounds_exhausted"
    assert changelog["handover"]["code"] == "no_progress"  # the same tree twice
    assert [f["code"] for f in changelog["findings"]] == ["ac_without_command"]
    audit = (demo.root / ".harness/audit/events.ndjson").read_text().splitlines()
    finished = [json.loads(x) for x in audit if '"harness.run.finished"' in x][-1]
    counts = ("passed", "failed", "blocked", "skipped", "errors", "interrupted")
    assert [finished[k] for k in counts] == [1, 0, 2, 0, 0, 0], finished  # blocked said too
    branch = git(demo.root, "show", "harness/divide:.harness/missions/divide/mission.yaml")
    assert "status: done" in branch
    assert _clean(demo.root)

    again = demo.uh("harness", "run")  # `h` pressed again: every branch exists
    assert again.code == 1 and "Traceback" not in again.stderr
    assert again.stdout.count("[SKIPPED]") == 3 and "already exists" in again.stdout
    # the skips replace no outcome: divide is still green on its branch, awaiting review,
    # in status's lines and its JSON alike (the dashboard's note: tests/tui/test_badges.py)
    status = demo.uh("status")
    green = f"  green on harness/divide (harness run {json.loads(run.stdout)['run_id']}): review it, then "
    assert green + "uh-core promote divide --branch harness/divide" in status.stdout, status.stdout
    snapshot = json.loads(demo.uh("status", "--json").stdout)
    latest = {r["mission_id"]: r["outcome"] for r in snapshot["harness"]["requirements"]}
    assert latest == {"divide": "pass", "changelog": "blocked", "mean": "blocked"}, latest

    promoted = demo.uh("promote", "divide", "--branch", "harness/divide", "--approved-by", "ada")
    assert promoted.code == 0, promoted.stderr
    assert "def divide(" in (demo.root / "src/calc/core.py").read_text()
    refused = demo.uh("promote", "mean", "--branch", "harness/mean", "--approved-by", "ada")
    assert refused.code == 1 and "needs --force" in refused.stderr
    assert _clean(demo.root)
