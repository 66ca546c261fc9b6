"""Ray is imported only on the ``--executor ray`` path, and ``uh-core worker`` says what a
machine will advertise before it starts anything."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import Repo
from tests.runtime.helpers import add_manifest

PROBE = """
import sys
from uh_core.cli.main import run
try:
    run(sys.argv[1:])
except SystemExit:
    pass
print(sorted(name for name in sys.modules if name == "ray" or name.startswith("ray.")))
"""


def _modules(*argv: str) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120
    )
    return json.loads(result.stdout.strip().splitlines()[-1].replace("'", '"'))


@pytest.mark.parametrize(
    "argv", [["--help"], ["harness", "run", "--help"], ["mission", "run-all", "--help"],
             ["worker", "--help"]],
)  # fmt: skip
def test_help_does_not_import_ray(argv: list[str]) -> None:
    assert _modules(*argv) == []


def test_a_local_run_all_does_not_import_ray(repo: Repo) -> None:
    repo.mission("m", "id: m\nacceptance_criteria:\n  - id: x\n    check_command: 'true'\n")
    add_manifest(repo, "one", "runtime_kind: script\nstatus: active\nconfig:\n  script: 'true'\n")
    repo.commit("m")
    assert _modules("mission", "run-all", "m", "--runtimes", "one", "--root", str(repo.root)) == []


def test_worker_dry_run_advertises_what_is_installed(repo: Repo) -> None:
    add_manifest(repo, "one", "runtime_kind: script\nstatus: active\nconfig:\n  script: 'true'\n")
    repo.commit("one")
    result = repo.uh_raw("worker", "--address", "10.0.0.1:6379", "--dry-run", "--json",
                         "--root", str(repo.root))  # fmt: skip
    assert result.code == 0, result.stderr
    found = json.loads(result.stdout)
    assert "one" in found["runtimes"]
    assert found["resources"]["uh_runtime_one"] == 1000
    assert "codex" in found["missing"]  # the real CLIs are not on this PATH
    argv = found["command"]
    assert argv[1:3] == ["start", "--address=10.0.0.1:6379"]
    assert json.loads(argv[3].removeprefix("--resources="))["uh_runtime_one"] == 1000


def test_worker_refuses_a_runtime_it_cannot_run(repo: Repo) -> None:
    add_manifest(repo, "gone", "runtime_kind: codex\nstatus: active\nconfig:\n"
                 "  cli_command: no-such-agent-cli-7\n")  # fmt: skip
    result = repo.uh_raw("worker", "--head", "--runtimes", "gone", "--dry-run",
                         "--root", str(repo.root))  # fmt: skip
    assert result.code == 2
    assert "runtime gone cannot run on this machine: 'no-such-agent-cli-7' not found" in (
        result.stderr
    )
    result = repo.uh_raw("worker", "--head", "--runtimes", "nope", "--dry-run",
                         "--root", str(repo.root))  # fmt: skip
    assert result.code == 2 and "--runtimes names unknown runtimes: nope" in result.stderr
    both = repo.uh_raw("worker", "--head", "--address", "x:1", "--dry-run")
    assert both.code == 2  # one of them, not both
