"""The consensus patch of a divergent run-all (uh_core/runall/consensus.py): scripted agents
whose diffs share some hunks and differ in others, through the real ``mission run-all``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import Repo, git
from tests.runtime.helpers import add_manifest

PY = sys.executable
BASE = "".join(f"line{n} = {n}\n" for n in range(1, 41))  # a.py: forty lines


def _agent(folder: Path, name: str, edits: dict[int, str], *, insert: dict[int, str] | None = None,
           extra: bool = False) -> str:  # fmt: skip
    """A script runtime: replace lines (1-based) of a.py, insert lines after others, maybe
    add a file; its manifest body."""
    script = folder / f"{name}.py"
    script.write_text(
        "import pathlib\n"
        "lines = pathlib.Path('a.py').read_text().splitlines(keepends=True)\n"
        f"for n, text in {edits!r}.items():\n"
        "    lines[n - 1] = text + '\\n'\n"
        f"for n, text in sorted({insert or {}!r}.items(), reverse=True):\n"
        "    lines.insert(n, text + '\\n')\n"
        "pathlib.Path('a.py').write_text(''.join(lines))\n"
        + ("pathlib.Path('extra.txt').write_text('only one agent adds this\\n')\n" if extra else "")
    )
    return f"runtime_kind: script\nstatus: active\nconfig:\n  script: {PY} {script}\n"


def _setup(repo: Repo, check: str, **runtimes: str) -> None:
    repo.write("a.py", BASE)
    shown = json.dumps(check)  # a JSON string is YAML: "true" stays a command
    repo.mission("m", f"id: m\nacceptance_criteria:\n  - id: x\n    check_command: {shown}\n")
    for adapter_id in ("aider", "claude", "codex", "hermes", "oh-my-pi", "pi"):
        (repo.root / f".harness/adapters/{adapter_id}.yaml").unlink(missing_ok=True)
    for name, body in runtimes.items():
        add_manifest(repo, name, body)
    repo.commit("setup")


def _run_all(repo: Repo, *extra: str) -> dict[str, Any]:
    result = repo.uh("mission", "run-all", "m", "--json", *extra)
    assert result.code in (0, 1), result
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _hunks(items: list[dict[str, Any]]) -> list[tuple[str, int, list[str]]]:
    return sorted((h["file"], h["at"], sorted(h["runtimes"])) for h in items)


def test_the_hunks_most_agents_made_are_applied_verified_and_promotable(
    repo: Repo, tmp_path: Path
) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    runtimes = {
        # all three fix line 5; two fix line 30 (one with other spacing); the rest is theirs
        "r1": _agent(agents, "r1", {5: "line5 = 50", 30: "line30 = 300"}, extra=True),
        "r2": _agent(agents, "r2", {5: "line5 = 50", 30: "line30  =  300"}, insert={15: "# r2"}),
        "r3": _agent(agents, "r3", {5: "line5 = 50", 30: "line30 = 301"}),
    }
    _setup(repo, f"{PY} -c 'import a; assert a.line5 == 50 and a.line30 == 300'", **runtimes)
    data = _run_all(repo)
    assert data["status"] == "divergent"
    found = data["consensus"]
    assert found["status"] == "verified", found
    assert found["agree_min"] == 2 and sorted(found["considered"]) == ["r1", "r2", "r3"]
    assert _hunks(found["hunks"]) == [("a.py", 2, ["r1", "r2", "r3"]), ("a.py", 27, ["r1", "r2"])]
    assert _hunks(found["disputed"]) == [
        ("a.py", 13, ["r2"]),  # the insertion after line 15
        ("a.py", 27, ["r3"]),  # line 30 made 301
        ("extra.txt", 0, ["r1"]),
    ]
    assert found["verification"] == "passed" and found["duration_ms"] < 5000
    patch = (repo.root / found["patch"]).read_text()
    assert "+line5 = 50" in patch and "extra.txt" not in patch and "# r2" not in patch
    sandbox = found["sandbox"]
    assert sandbox.startswith("sbx-m-consensus-")
    report = (repo.root / ".harness/missions/m/runtime-comparison.md").read_text()
    assert "## Consensus" in report and "consensus: VERIFIED" in report
    assert git(repo.root, "status", "--porcelain") == ""  # the main checkout stays clean
    # the consensus sandbox lands like any other
    landed = repo.uh("promote", "m", "--sandbox", sandbox, "--approved-by", "Ada")
    assert landed.code == 0, landed
    text = (repo.root / "a.py").read_text()
    assert "line5 = 50\n" in text and "line30 = 300\n" in text and "# r2" not in text
    assert not (repo.root / "extra.txt").exists()
    assert "Uh-Source: sandbox " + sandbox in git(repo.root, "log", "-1", "--format=%B")


def test_a_consensus_that_fails_verification_says_which_check(repo: Repo, tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    runtimes = {
        "r1": _agent(agents, "r1", {5: "line5 = 50"}, extra=True),
        "r2": _agent(agents, "r2", {5: "line5 = 50", 25: "line25 = 250"}),
        "r3": _agent(agents, "r3", {5: "line5 = 50", 35: "line35 = 350"}),
    }
    _setup(repo, "test -f extra.txt", **runtimes)  # only r1 made it: not in the consensus
    found = _run_all(repo)["consensus"]
    assert found["status"] == "failed", found
    assert found["verification"] == "failed" and "x" in found["detail"]
    assert _hunks(found["hunks"]) == [("a.py", 2, ["r1", "r2", "r3"])]


def test_overlapping_hunks_are_a_conflict_not_a_patch(repo: Repo, tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    two = {5: "line5 = 50", 6: "line6 = 60"}
    runtimes = {
        "r1": _agent(agents, "r1", two),
        "r2": _agent(agents, "r2", two),
        "r3": _agent(agents, "r3", {6: "line6 = 66"}),
        "r4": _agent(agents, "r4", {6: "line6 = 66"}),
    }
    _setup(repo, "true", **runtimes)
    found = _run_all(repo, "--agree-min", "2")["consensus"]
    assert found["status"] == "conflict", found
    assert "does not apply" in found["detail"] and "overlaps" in found["detail"]
    assert found["sandbox"] is None
    sandboxes = [p.name for p in (repo.root / ".harness/sandboxes").glob("sbx-m-consensus-*")]
    assert sandboxes == []


def test_no_hunk_in_common_and_bad_agree_min(repo: Repo, tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    runtimes = {f"r{n}": _agent(agents, f"r{n}", {n * 10: f"line{n * 10} = 0"}) for n in (1, 2, 3)}
    _setup(repo, "true", **runtimes)
    found = _run_all(repo)["consensus"]
    assert found["status"] == "empty" and len(found["disputed"]) == 3
    assert found["detail"] == "no hunk was made by 2 of the 3 runtimes that succeeded"
    refused = repo.uh("mission", "run-all", "m", "--agree-min", "0")
    assert refused.code == 2 and "--agree-min 0" in refused.stderr


def test_an_agreement_builds_no_consensus(repo: Repo, tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    same = {"r1": _agent(agents, "r1", {5: "x = 1"}), "r2": _agent(agents, "r2", {5: "x = 1"})}
    _setup(repo, "true", **same)
    found = _run_all(repo)["consensus"]
    assert found["status"] == "not_built" and "same diff" in found["detail"]
