"""The TypeScript uh's commands uh now has: mission new, sandbox status, discard
--keep-branch, adapter capabilities, init --force, validate FILE."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.compat.conftest import TS_UH
from tests.conftest import Repo

W = TS_UH / "written"


def test_mission_new_writes_a_mission_both_tools_accept(repo: Repo) -> None:
    made = repo.uh(
        "mission",
        "new",
        "--title",
        "Add a divide function",
        "--criterion",
        "divide exists::test -f README.md",
        "--criterion",
        "a person read it",
        "--check",
        "tests=true",
    )
    assert made.code == 0, made.stderr
    path = repo.root / ".harness/missions/add-a-divide-function/mission.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert data["acceptance_criteria"] == [
        {"id": "ac-1", "description": "divide exists", "check_command": "test -f README.md"},
        {"id": "ac-2", "description": "a person read it", "severity": "warn"},
    ]
    assert data["verification"]["required_checks"] == [{"name": "tests", "command": "true"}]
    strict = repo.uh("mission", "validate", "add-a-divide-function", "--strict")
    assert strict.code == 0 and "TypeScript" not in strict.stderr, strict.stderr
    assert repo.uh("verify", "add-a-divide-function").code == 0
    again = repo.uh("mission", "new", "--title", "Add a divide function")
    assert again.code == 2 and "--force" in again.stderr
    assert repo.uh("mission", "new", "x", "--title", "X", "--criterion", "::cmd").code == 2
    assert repo.uh("mission", "new", "../x", "--title", "X").code == 2
    # the TypeScript spelling, flags as it takes them
    ts_style = ("mission", "create", "ts", "--title", "T", "--workflow", "w", "--objective", "o")
    assert repo.uh(*ts_style).code == 0
    assert repo.uh("mission", "validate", "ts", "--strict").code == 0


def test_sandbox_status_and_discard_keep_branch_on_ts_sandboxes(ts_repo: Repo) -> None:
    status = ts_repo.uh("sandbox", "status", "sbx-ts-1", "--json")
    assert status.code == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["exists"] is False and data["branch"] == "sandbox/sbx-ts-1"
    assert ts_repo.uh("sandbox", "status", "nope").code == 2
    gone = ts_repo.uh("sandbox", "discard", "sbx-ts-1", "--keep-branch")
    assert gone.code == 0, gone.stderr
    index = yaml.safe_load((ts_repo.root / ".harness/sandboxes/index.yaml").read_text())
    (left,) = index["sandboxes"]
    assert left["id"] == "sbx-tsm-hermes-20261201110958"
    assert left["path"] and left["status"] == "created"  # still what the TS tool reads


def test_sandbox_status_of_a_real_sandbox(repo: Repo) -> None:
    from uh_core.layout import Layout
    from uh_core.sandbox.worktree import create_sandbox

    repo.mission("m", "id: m\n")
    entry = create_sandbox(Layout(repo.root), "m", "alpha")
    (Path(entry.worktree) / "new.txt").write_text("x\n")
    data = json.loads(repo.uh("sandbox", "status", entry.id, "--json").stdout)
    assert data["exists"] and data["changed"] == ["new.txt"]


def test_adapter_capabilities(ts_repo: Repo) -> None:
    result = ts_repo.uh("adapter", "capabilities", "--json")
    assert result.code == 0, result.stderr
    rows = {r["id"]: r for r in json.loads(result.stdout)["adapters"]}
    assert "cli-execution" in rows["codex"]["capabilities"]
    text = ts_repo.uh("adapter", "capabilities", "codex")
    assert text.code == 0 and text.stdout.startswith("codex — ")


def test_init_force_rewrites_only_project_and_builtin_manifests(repo: Repo) -> None:
    (repo.root / ".harness/adapters/codex.yaml").write_text("broken: [\n")
    repo.mission("m", "id: m\n")
    result = repo.uh("init", "--force", "--json")
    assert result.code == 0, result.stderr
    updated = json.loads(result.stdout)["updated"]
    assert ".harness/project.yaml" in updated and ".harness/adapters/codex.yaml" in updated
    assert (repo.root / ".harness/missions/m/mission.yaml").read_text() == "id: m\n"
    assert repo.uh("adapter", "list").code == 0
    assert json.loads(repo.uh("init", "--json").stdout)["updated"] == []


def test_validate_any_file_without_a_harness(tmp_path: Path) -> None:
    from tests.conftest import Repo as R

    outside = R(tmp_path)
    files = [
        W / "missions/tsm/verification.yaml",
        W / "missions/tsm/promotion.yaml",
        W / "sandboxes/index.yaml",
        W / "missions/tsm/runtime-result.yaml",
        W / "project.yaml",
        W / "adapters/codex.yaml",
        W / "missions/tsm/mission.yaml",
    ]
    result = outside.uh_raw("validate", "--json", *map(str, files))
    assert result.code == 0, result.stdout + result.stderr
    kinds = [r["kind"] for r in json.loads(result.stdout)["files"]]
    assert kinds[0] == "uh.verification-result.v0" and kinds[-1] == "uh.mission.v0"
    bad = tmp_path / "mission.yaml"
    bad.write_text("id: x\n")
    assert outside.uh_raw("validate", str(bad)).code == 0  # TS rules: warnings
    strict = outside.uh_raw("validate", str(bad), "--strict")
    assert strict.code == 2 and "workflow_profile" in strict.stderr
    other = tmp_path / "x.yaml"
    other.write_text("schema_version: nope\n")
    assert outside.uh_raw("validate", str(other)).code == 2


def test_mission_new_asks_in_a_terminal(repo: Repo) -> None:
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "uh_core", "mission", "new", "--root", str(repo.root)],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.write(leader, b"Asked title\nit works::true\nsomeone looked\n\n")
        try:
            _out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    finally:
        os.close(follower)
        os.close(leader)
    assert proc.returncode == 0, err
    data = yaml.safe_load(
        (repo.root / ".harness/missions/asked-title/mission.yaml").read_text(encoding="utf-8")
    )
    assert data["title"] == "Asked title"
    assert [ac["description"] for ac in data["acceptance_criteria"]] == [
        "it works",
        "someone looked",
    ]
    piped = repo.uh("mission", "new")  # stdin is not a terminal: the flag is required
    assert piped.code == 2 and "--title" in piped.stderr
