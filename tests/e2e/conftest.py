"""Fixtures of the end-to-end suite: a scripted model server, a repository with one mission,
and each real CLI pointed at the server (tests/e2e/clis.py)."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.e2e.clis import CLIS, ROOT, Cli, configure, manifest
from tests.e2e.model_server import ModelServer, Script
from tests.runtime.helpers import add_manifest

HOMES = ROOT.parent / "uh-e2e-homes"  # each test's CLI home: HOMES/<marker>, removed after

MISSION = """\
id: m
title: Append a line
objective: Append the line "hello from the agent" to a.txt.
acceptance_criteria:
  - id: line-added
    description: a.txt ends with the new line
    check_command: grep -qx 'hello from the agent' a.txt
    severity: block
"""


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(Script()) as running:
        yield running


@dataclass
class Agent:
    """One real CLI, installed, pointed at ``server``, its manifest committed in ``repo``."""

    cli: Cli
    repo: Repo
    server: ModelServer
    runtime: str
    marker: str  # in the environment of every process this test starts (UH_E2E_RUN)
    config: str  # the manifest's config block

    def runtime_config(self, text: str) -> None:
        """Commit the manifest with ``config.runtime_config`` set to ``text`` (YAML lines)."""
        add_manifest(self.repo, self.runtime, manifest(self.cli, self.config, runtime_config=text))
        self.repo.commit("runtime_config")


def live_with_marker(marker: str) -> list[int]:
    """Pids (not zombies) whose environment holds ``UH_E2E_RUN=marker``."""
    needle = f"UH_E2E_RUN={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture(params=sorted(CLIS))
def agent(
    request: pytest.FixtureRequest,
    repo: Repo,
    server: ModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> Agent:
    cli = CLIS[request.param]
    why = cli.missing()
    if why is not None:
        pytest.skip(why)
    marker = uuid.uuid4().hex
    # Outside /tmp: codex refuses to set up its apply_patch helper under a temporary folder.
    home = HOMES / marker
    request.addfinalizer(lambda: shutil.rmtree(home, ignore_errors=True))
    env, config = configure(cli, server.url, home)
    for key, value in {**env, "UH_E2E_RUN": marker}.items():
        monkeypatch.setenv(key, value)
    repo.write("a.txt", "hi\n")
    repo.mission("m", MISSION)
    for adapter_id in ("aider", "claude", "codex", "hermes", "oh-my-pi", "pi"):
        (repo.root / f".harness/adapters/{adapter_id}.yaml").unlink(missing_ok=True)
    add_manifest(repo, cli.name, manifest(cli, config))
    repo.commit("the mission and the agent")
    return Agent(cli, repo, server, cli.name, marker, config)
