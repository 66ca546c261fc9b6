"""The real CLIs through the two loops: ``run-all`` over every installed CLI at once (their
diffs agree), and ``harness run`` with each (green, committed on ``harness/m``)."""

from __future__ import annotations

import json
import shutil
import uuid

import pytest

from tests.conftest import Repo, git
from tests.e2e.clis import CLIS, configure, manifest
from tests.e2e.conftest import HOMES, MISSION, Agent
from tests.e2e.model_server import ModelServer
from tests.runtime.helpers import add_manifest


def test_run_all_over_every_installed_cli_agrees(
    repo: Repo, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    installed = [cli for cli in CLIS.values() if cli.missing() is None]
    if len(installed) < 2:
        pytest.skip("fewer than two agent CLIs are installed (tests/e2e/install_clis.sh)")
    home = HOMES / uuid.uuid4().hex
    try:
        repo.write("a.txt", "hi\n")
        repo.mission("m", MISSION)
        for adapter_id in ("aider", "claude", "codex", "hermes", "oh-my-pi", "pi"):
            (repo.root / f".harness/adapters/{adapter_id}.yaml").unlink(missing_ok=True)
        for cli in installed:  # one home: each CLI's files are its own there
            env, config = configure(cli, server.url, home)
            for key, value in env.items():
                monkeypatch.setenv(key, value)
            add_manifest(repo, cli.name, manifest(cli, config))
        repo.commit("every agent")
        result = repo.uh("mission", "run-all", "m", "--json", timeout=300)
        data = json.loads(result.stdout)
        statuses = {row["runtime"]: row["status"] for row in data["runtimes"]}
        assert statuses == {cli.name: "succeeded" for cli in installed}, data
        assert data["status"] == "agreement", data
        assert sorted(data["agreement_runtimes"]) == sorted(cli.name for cli in installed)
        assert result.code == 0
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_harness_run_with_the_cli_goes_green(agent: Agent) -> None:
    result = agent.repo.uh("harness", "run", "--runtime", agent.runtime, "--json", timeout=300)
    assert result.code == 0, (result.stdout[-2000:], result.stderr[-2000:])
    shown = git(agent.repo.root, "show", "harness/m:a.txt")
    assert shown == "hi\nhello from the agent\n"
    assert git(agent.repo.root, "status", "--porcelain") == ""
