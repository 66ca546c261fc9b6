"""An agent that wants the operator's secrets from its environment (issue 30, route 6).

The operator's shell holds cloud credentials, forge tokens, model keys and a Ray cluster's
token. A hostile agent run by ``harness run`` writes its whole environment into a file it
commits and prints it on its output. None of those values may reach the commit, the
sandbox, the logs or any record: the agent receives only what docs/adapters.md lists — and
what its manifest or the project declares, which then arrives, visibly.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.conftest import git
from tests.harness.conftest import TEST_CMD, Project

SECRETS = (
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "RAY_AUTH_TOKEN",
    "RAY_ADDRESS",
    "SSH_AUTH_SOCK",
    "DATABASE_PASSWORD",
)

# Dumps every variable it received into a file of its commit, and on its output.
DUMP = """
import json
dump = json.dumps(dict(os.environ), sort_keys=True, indent=1)
write("leak/env.json", dump)
print(dump)
write("src/calc.py", GOOD)
"""


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The operator's shell: each secret a value found nowhere else."""
    values = {name: f"secret-{name.lower()}-{uuid.uuid4().hex}" for name in SECRETS}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def _leaks(roots: list[Path], values: dict[str, str]) -> list[str]:
    """Every file below ``roots`` holding one of ``values``: 'path: NAME'."""
    found = []
    for root in roots:
        for path in (p for p in root.rglob("*") if p.is_file()):
            data = path.read_bytes()
            found += [f"{path}: {n}" for n, v in values.items() if v.encode() in data]
    return found


def _received(project: Project) -> dict[str, str]:
    data: dict[str, str] = json.loads(project.show("harness/calc", "leak/env.json"))
    return data


def test_the_agent_receives_none_of_the_operators_secrets(
    project: Project, isolation: str, secrets: dict[str, str], _state_dir: Path
) -> None:
    agent = project.agent("dumper", DUMP)
    result, data = project.run_json("--agent", agent, "--isolation", isolation)
    assert result.code == 0, data
    received = _received(project)  # the attack ran, and its commit landed
    assert received["MISSION_ID"] == "calc" and "PATH" in received
    assert not set(SECRETS) & set(received), sorted(received)
    # nowhere: the commit, the sandbox, the agent's logs, the ledger and records
    assert _leaks([project.root, _state_dir], secrets) == []


def test_a_declared_variable_arrives_and_nothing_else(
    project: Project, secrets: dict[str, str]
) -> None:
    """A manifest declaring OPENAI_API_KEY: that one arrives; AWS and GitHub still do not."""
    agent = project.agent("dumper", DUMP)
    project.repo.write(
        ".harness/adapters/openai-agent.yaml",
        "id: openai-agent\nruntime_kind: command\nstatus: active\n"
        f"config:\n  command: {agent!r}\nenv_pass: [OPENAI_API_KEY]\n",
    )
    project.repo.commit("an agent that needs its model's key")
    result, data = project.run_json("--runtime", "openai-agent", "--isolation", "none")
    assert result.code == 0, data
    received = _received(project)
    assert received["OPENAI_API_KEY"] == secrets["OPENAI_API_KEY"]
    assert not (set(SECRETS) - {"OPENAI_API_KEY"}) & set(received), sorted(received)


def test_the_project_allow_list_admits_what_it_names(
    project: Project, secrets: dict[str, str]
) -> None:
    project.repo.write(
        "harness.config.yaml",
        f"harness_version: 1\ntest_cmd: {TEST_CMD}\nmax_attempts: 1\n"
        f"isolation_writable: ['{project.agents}']\nagent_env: [GH_*]\n",
    )
    project.repo.commit("the agent may use the gh CLI")
    result, data = project.run_json("--agent", project.agent("dumper", DUMP), "--isolation", "none")
    assert result.code == 0, data
    received = _received(project)
    assert received["GH_TOKEN"] == secrets["GH_TOKEN"]
    assert not (set(SECRETS) - {"GH_TOKEN"}) & set(received), sorted(received)


def test_an_allow_list_written_in_the_sandbox_opens_nothing(
    project: Project, secrets: dict[str, str]
) -> None:
    """Attempt 1 writes ``agent_env: ['*']`` into the sandbox's harness.config.yaml (and
    fails); attempt 2 dumps its environment. The allow-list is read from the operator's
    checkout, never from the sandbox the agent writes."""
    project.repo.write(
        "harness.config.yaml",
        f"harness_version: 1\ntest_cmd: {TEST_CMD}\nmax_attempts: 2\n"
        f"isolation_writable: ['{project.agents}']\n",
    )
    project.repo.commit("two attempts")
    body = f"""
if n == 1:
    config = pathlib.Path("harness.config.yaml")
    config.write_text(config.read_text() + "agent_env: ['*']\\n")
    write("src/calc.py", BAD)
else:
    {DUMP.strip().replace(chr(10), chr(10) + "    ")}
"""
    _, data = project.run_json("--agent", project.agent("widener", body), "--isolation", "none")
    assert len(data["requirements"][0]["attempts"]) == 2, data
    if data["requirements"][0]["commit"] is not None:
        received = _received(project)
        assert not set(SECRETS) & set(received), sorted(received)
    assert _leaks([project.root], secrets) == []
    assert "agent_env" not in git(project.root, "show", "HEAD:harness.config.yaml")
