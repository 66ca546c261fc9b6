"""``adapter list`` marks which runtimes can run here; ``adapter check`` takes several ids."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import Repo
from tests.runtime.helpers import add_manifest
from uh_core.adapters.here import runnable_here
from uh_core.models.adapter import AdapterManifest


def _only(repo: Repo) -> None:
    for adapter_id in ("aider", "claude", "codex", "hermes", "oh-my-pi", "pi"):
        (repo.root / f".harness/adapters/{adapter_id}.yaml").unlink(missing_ok=True)
    add_manifest(repo, "fixer", "runtime_kind: script\nconfig:\n  script: 'true'\n")
    add_manifest(repo, "ghost", "runtime_kind: codex\nconfig:\n  cli_command: no-such-codex-here\n")
    add_manifest(repo, "empty", "runtime_kind: script\n")


def test_list_marks_what_can_run_here(repo: Repo) -> None:
    _only(repo)
    data = json.loads(repo.uh("adapter", "list", "--json").stdout)
    rows = {row["id"]: row for row in data["adapters"]}
    assert rows["fixer"]["here"] is True and rows["fixer"]["here_reason"] is None
    assert rows["ghost"]["here"] is False
    assert "'no-such-codex-here' not found on PATH" in rows["ghost"]["here_reason"]
    assert rows["empty"]["here"] is False and "config.script" in rows["empty"]["here_reason"]
    assert isinstance(data["isolation"]["bwrap"], bool) and data["isolation"]["reason"]
    text = repo.uh("adapter", "list").stdout
    line = next(x for x in text.splitlines() if x.startswith("fixer"))
    assert " ready " in line
    line = next(x for x in text.splitlines() if x.startswith("ghost"))
    assert " missing " in line
    assert "  ghost: 'no-such-codex-here' not found on PATH" in text
    assert "isolation here: " in text


def test_check_takes_several_ids(repo: Repo) -> None:
    _only(repo)
    both = repo.uh("adapter", "check", "fixer", "ghost")
    assert both.code == 1
    lines = both.stdout.splitlines()
    assert lines[0].startswith("[OK] fixer") and lines[1].startswith("[UNAVAILABLE] ghost")
    assert len(lines) == 2
    data = json.loads(repo.uh("adapter", "check", "fixer", "nope", "--json").stdout)
    assert data["ok"] is False
    assert [r["id"] for r in data["adapters"]] == ["fixer", "nope"]
    assert "does not exist" in data["adapters"][1]["reason"]
    assert repo.uh("adapter", "check", "fixer", "fixer").code == 0


def test_a_node_cli_without_node_is_missing(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cli = bin_dir / "fakecli"
    cli.write_text("#!/usr/bin/env no-such-node-here\n")
    cli.chmod(0o755)
    manifest = AdapterManifest.model_validate(
        {"id": "x", "runtime_kind": "codex", "config": {"cli_command": "fakecli"}}
    )
    old = os.environ["PATH"]
    os.environ["PATH"] = f"{bin_dir}:{old}"
    try:
        here = runnable_here(manifest)
    finally:
        os.environ["PATH"] = old
    assert not here.ok and "needs 'no-such-node-here'" in (here.reason or "")
    command = AdapterManifest.model_validate(
        {"id": "y", "runtime_kind": "command", "config": {"command": "sh -c : {prompt_file}"}}
    )
    assert runnable_here(command).ok
