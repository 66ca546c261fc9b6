"""``harness prompt`` (exact, touches nothing) and runs refused before anything starts."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from tests.conftest import git
from tests.harness.conftest import Project, write_config


def _everything(root: Path) -> dict[str, tuple[int, str]]:
    """Every file under the root, .git included, with its mtime and content hash."""
    found = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            data = path.read_bytes()
            found[str(path)] = (path.stat().st_mtime_ns, hashlib.sha256(data).hexdigest())
    return found


def test_harness_prompt_prints_the_exact_prompt_and_touches_nothing(project: Project) -> None:
    project.repo.write("prompts/prefix.md", "You work for ACME.\nBe brief.\n")
    project.repo.write("AI_RULES.md", "Never add dependencies.\n")
    write_config(
        project.repo,
        "prompt_prefix: ignored, the file wins\nprompt_prefix_file: prompts/prefix.md\n"
        "rules_file: AI_RULES.md\n",
    )
    text = project.show("HEAD", ".harness/missions/calc/mission.yaml")
    project.repo.mission("calc", text + "read_first: [README.md]\n")
    project.repo.commit("prompt settings")
    before = _everything(project.root)
    result = project.repo.uh("harness", "prompt", "calc")
    assert result.code == 0, result.stderr
    assert _everything(project.root) == before
    prompt = result.stdout
    assert prompt.startswith(
        "You work for ACME.\nBe brief.\n\n---\n\n# Implement calc\n\n## Mission\n"
    )
    headings = [line for line in prompt.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Mission", "## Objective", "## Constraints", "## Acceptance criteria",
        "## Expected outputs", "## Read first", "## Project rules (AI_RULES.md)",
        "## Definition of done", "## Final message",
    ]  # fmt: skip
    assert "checked by: `" in prompt and "Never add dependencies." in prompt
    assert "ignored, the file wins" not in prompt
    assert "`tests/test_calc.py::test_add`" in prompt
    assert prompt.rstrip().endswith("```")
    as_json = json.loads(project.repo.uh("harness", "prompt", "calc", "--format", "json").stdout)
    assert as_json["prompt"] == prompt
    assert _everything(project.root) == before


def test_an_agent_command_without_the_placeholder_is_refused_before_anything(
    project: Project,
) -> None:
    before = project.snapshot()
    result = project.run("--agent", "echo hello")
    assert result.code == 2
    assert "{prompt_file}" in result.stderr and "Traceback" not in result.stderr
    assert project.snapshot() == before
    for generated in ("runs", "prompts", "missions/calc/events.ndjson"):
        assert not (project.root / ".harness" / generated).exists()
    audit = (project.root / ".harness/audit/events.ndjson").read_text()
    assert "harness." not in audit
    assert git(project.root, "branch", "--list", "harness/*") == ""
    assert git(project.root, "worktree", "list").count("\n") == 1


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("agent: echo hi\n", "harness.config.yaml:5:1: agent: agent command has no {prompt_file}"),
        (
            "protected_path: [x]\n",
            "protected_path': unknown key 'protected_path' (fix: did you mean 'protected_paths'?)",
        ),
        ("max_attempts: 0\n", "harness.config.yaml:4:1: max_attempts:"),
        ("rules_file: RULES.md\n", "harness.config.yaml: rules_file: RULES.md does not exist"),
    ],
)
def test_a_bad_config_exits_2_naming_the_key(project: Project, config: str, message: str) -> None:
    text = (project.root / "harness.config.yaml").read_text()
    if config.startswith("max_attempts"):
        text = text.replace("max_attempts: 1\n", "")
    project.repo.write("harness.config.yaml", text + config)
    project.repo.commit("bad config")
    result = project.run("--agent", "true {prompt_file}")
    assert result.code == 2, result.stdout
    assert message.split("'", 1)[0] in result.stderr, result.stderr
    assert message.rsplit(": ", 1)[-1] in result.stderr, result.stderr
    assert not (project.root / ".harness/runs").exists()


def test_no_agent_and_unknown_missions_exit_2(project: Project) -> None:
    result = project.run()
    assert result.code == 2 and "no agent to run" in result.stderr
    result = project.run("--agent", "true {prompt_file}", "--req", "nope")
    assert result.code == 2 and "--req nope: unknown mission" in result.stderr
    result = project.run("--agent", "true {prompt_file}", "--runtime", "x")
    assert result.code == 2 and "--agent and --runtime" in result.stderr
