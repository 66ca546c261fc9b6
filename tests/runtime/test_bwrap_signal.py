"""An agent ended by a signal reads the same confined and unconfined: bubblewrap exits
with 128+N for a command signal N ended, which uh reports as the signal (SIGTERM), not as
``exit: 143``."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import Repo
from tests.runtime.helpers import add_manifest
from uh_core.isolation import bwrap_available

MISSION = "id: m\ntitle: t\nacceptance_criteria:\n  - id: c\n    check_command: 'true'\n"
KILLS_ITSELF = (
    f"exec {sys.executable} -c 'import os, signal; os.kill(os.getpid(), signal.SIGTERM)' "
    "{prompt_file}"
)


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
def test_an_agent_killed_by_sigterm_says_sigterm(repo: Repo, isolation: str) -> None:
    if isolation == "bwrap" and not bwrap_available()[0]:
        pytest.skip("bubblewrap cannot run here")
    repo.mission("m", MISSION)
    add_manifest(
        repo,
        "killed",
        f"runtime_kind: command\nstatus: active\nconfig:\n  command: {KILLS_ITSELF!r}\n",
    )
    repo.commit("setup")
    shown = repo.uh("mission", "run", "m", "--runtime", "killed", "--isolation", isolation)
    assert "exit: SIGTERM" in shown.stdout, shown.stdout + shown.stderr
    data = json.loads(
        repo.uh(
            "mission", "run", "m", "--runtime", "killed", "--isolation", isolation, "--json",
            "--force",
        ).stdout
    )  # fmt: skip
    assert (data["exit_code"], data["signal"]) == (None, 15), data
