"""claude: ``claude -p --output-format stream-json --verbose`` and its recorded messages."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.conftest import (
    FINAL,
    FakeCli,
    FakeFactory,
    Sandbox,
    adapter_for,
    assert_flags_in_help,
    drive,
    fixture,
    help_text,
    live_group_members,
    saw,
)
from uh_core.adapters.claude import ClaudeParser
from uh_core.adapters.usage import Usage
from uh_core.errors import AdapterError

RECORDED_CWD = "/tmp/run-claude"
SUCCESS_KINDS = ["status", "log", "tool_call", "tool_call", "file_change", "log", "status"]


def claude(fake_cli: FakeFactory, stdout: str = "success.jsonl", **kwargs: Any) -> FakeCli:
    return fake_cli(
        "claude",
        stdout=fixture("claude", stdout),
        version="2.1.332 (Claude Code)",
        recorded_cwd=RECORDED_CWD,
        **kwargs,
    )


def test_command_line_is_the_one_checked_against_help(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    fake = claude(fake_cli)
    adapter = adapter_for("claude")
    ctx = sandbox.context(adapter.manifest)
    plan = adapter.prepare(ctx)
    assert plan.argv == [
        "claude",
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "acceptEdits",
    ]
    assert_flags_in_help(plan.argv, help_text("claude", "help-root.txt"))
    assert plan.stdin_file == str(sandbox.prompt_file)
    assert plan.cwd == str(sandbox.worktree)  # claude has no --cwd

    drive(adapter, ctx)
    assert fake.argv() == plan.argv[1:]
    assert fake.stdin() == sandbox.prompt_file.read_text(encoding="utf-8")
    assert fake.cwd().resolve() == sandbox.worktree.resolve()

    tuned = adapter_for(
        "claude",
        default_model="claude-sonnet-4-6",
        runtime_config={"permission_mode": "plan", "model": "claude-opus-4-1"},
    )
    argv = tuned.prepare(sandbox.context(tuned.manifest)).argv
    assert argv[argv.index("--permission-mode") + 1] == "plan"
    assert argv[argv.index("--model") + 1] == "claude-opus-4-1"
    assert_flags_in_help(argv, help_text("claude", "help-root.txt"))
    wrong = adapter_for("claude", runtime_config={"permission_mode": "everything"})
    with pytest.raises(AdapterError, match="permission_mode"):
        wrong.prepare(sandbox.context(wrong.manifest))


@pytest.mark.parametrize("transcript", ["success.jsonl", "success-partial-messages.jsonl"])
def test_success_transcript(sandbox: Sandbox, fake_cli: FakeFactory, transcript: str) -> None:
    claude(fake_cli, transcript)
    adapter = adapter_for("claude")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.kinds == SUCCESS_KINDS  # stream_event and system/status lines add nothing
    assert run.messages("status")[0] == "session started (model claude-sonnet-4-6, acceptEdits)"
    assert run.messages("tool_call") == ["Read a.txt", "Edit a.txt"]
    assert run.messages("file_change") == ["a.txt"]
    assert run.messages("status")[-1] == "finished (3 turns)"
    assert run.result.status == "completed"
    assert run.final == FINAL
    parser = run.session.parser
    assert parser.usage == Usage(
        39 + 6600 + 3000, 210, 0.016496999999999998, 6600, 3000, "claude-sonnet-4-6"
    )
    assert parser.native_final is not None and parser.native_final.endswith("```\n")
    assert parser.error is None


@pytest.mark.parametrize("exit_code", [0, 1])
def test_failure_transcript_fails_whatever_the_exit_code(
    sandbox: Sandbox, fake_cli: FakeFactory, exit_code: int
) -> None:
    claude(fake_cli, "failure.jsonl", exit_code=exit_code)
    adapter = adapter_for("claude")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.kinds == ["status", "status", "blocker", "blocker"]
    assert run.messages("status")[1] == "API retry 1/1: authentication_failed"
    assert run.messages("blocker") == [
        "API error: Invalid API key · Fix external API key",
        "error (api_error): Invalid API key · Fix external API key",
    ]
    assert run.result.status == "failed"
    assert run.final == ""  # the API error text is no final message
    assert run.session.parser.native_final is None
    assert run.session.parser.usage == Usage(0, 0, 0.0, model="claude-sonnet-4-6")
    if exit_code == 0:
        assert run.result.blockers == [
            "claude reported an error: error (api_error): Invalid API key · Fix external API key"
        ]


def test_cancel_with_sigint_records_the_partial_result(
    sandbox: Sandbox, fake_cli: FakeFactory, tmp_path: Path
) -> None:
    lines = fixture("claude", "cancelled-sigint.jsonl").read_text().splitlines(keepends=True)
    rest = tmp_path / "after-sigint.jsonl"
    rest.write_text("".join(lines[4:]))  # what claude writes when interrupted
    claude(fake_cli, "cancelled-sigint.jsonl", hang_after=4, on_sigint=rest, sigint_exit=0)
    adapter = adapter_for("claude")
    assert adapter.cancel_signals[0] == signal.SIGINT
    run = drive(
        adapter, sandbox.context(adapter.manifest), cancel_when=saw("status", 4), grace_s=30
    )
    assert run.result.status == "cancelled"  # although claude exits 0
    assert run.result.exit_code == 0
    assert "[Request interrupted by user]" in run.messages("status")
    assert run.messages("blocker")[-1].startswith("error_during_execution (aborted_streaming)")
    assert run.result.blockers[0] == "cancelled: stopped by the test"
    assert live_group_members(run.session.process.pid) == []


def test_cancel_of_a_cli_ignoring_sigint_leaves_nothing(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    claude(fake_cli, "cancelled-sigint.jsonl", hang_after=2, on_sigint="ignore")
    adapter = adapter_for("claude")
    adapter.grace_s = 0.3  # type: ignore[misc]
    run = drive(adapter, sandbox.context(adapter.manifest), cancel_when=saw("status", 2))
    assert run.result.status == "cancelled"
    assert run.result.exit_code is None and run.result.logs["duration_ms"] >= 0
    assert live_group_members(run.session.process.pid) == []


def test_check_reports_a_missing_binary_and_a_present_one(
    fake_cli: FakeFactory, empty_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = adapter_for("claude").check()
    assert not missing.ok
    assert missing.reason is not None and "'claude' not found on PATH" in missing.reason
    claude(fake_cli)
    monkeypatch.setenv("PATH", str(fake_cli.bin_dir))
    found = adapter_for("claude").check()
    assert (found.ok, found.version) == (True, "2.1.332 (Claude Code)")


def test_parser_tolerates_garbage_and_unknown_messages() -> None:
    parser = ClaudeParser()
    assert parser.feed(b"") == []
    assert parser.feed(b'{"type":"assistant","message":') [0].kind == "log"  # fmt: skip
    assert parser.feed(b'{"type":"control_request","request":{}}') == []
    assert parser.feed(b'{"type":"assistant","message":{"content":"not a list"}}') == []
    assert parser.feed(b'{"type":"result","is_error":false,"modelUsage":[1]}')[0].kind == "status"
    events = parser.feed(
        b'{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1",'
        b'"name":"Write","input":{"file_path":"new.txt","content":"x"}}]}}'
    )
    assert [e.message for e in events] == ["Write new.txt"]
    # a failed edit changes nothing
    failed = parser.feed(
        b'{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1",'
        b'"is_error":true,"content":"denied"}]}}'
    )
    assert [e.kind for e in failed] == ["log"]
    denied = parser.feed(
        b'{"type":"result","is_error":false,"result":"ok","permission_denials":'
        b'[{"tool_name":"Bash","tool_use_id":"t2","tool_input":{}}]}'
    )
    assert [e.kind for e in denied] == ["blocker", "status"]
    assert parser.native_final == "ok"


def test_the_missions_own_checks_are_the_only_bash_granted(sandbox: Sandbox) -> None:
    # In -p mode claude asks before any Bash command; nobody answers, so without a grant every
    # check the prompt tells it to run is denied ("This command requires approval").
    from uh_core.models.mission import Mission

    sandbox.mission = Mission.model_validate(
        {
            "id": "m1",
            "acceptance_criteria": [
                {"id": "a", "check_command": "python3 -m pytest -q tests/test_a.py"},
                {"id": "b", "check_command": "grep -q x a.txt"},
                {"id": "c", "check_command": "grep -q x a.txt"},  # once
            ],
            "verification": {"required_checks": [{"name": "lint", "command": "ruff check ."}]},
        }
    )
    adapter = adapter_for("claude")
    argv = adapter.prepare(sandbox.context(adapter.manifest)).argv
    at = argv.index("--allowedTools")
    assert argv[at + 1 :] == [
        "Bash(python3 -m pytest -q tests/test_a.py)",
        "Bash(grep -q x a.txt)",
        "Bash(ruff check .)",
    ]
    assert_flags_in_help(argv, help_text("claude", "help-root.txt"))
    tuned = adapter_for("claude", runtime_config={"allowed_tools": ["Bash(make test)", "Edit"]})
    argv = tuned.prepare(sandbox.context(tuned.manifest)).argv
    assert argv[argv.index("--allowedTools") + 1 :] == ["Bash(make test)", "Edit"]
    none = adapter_for("claude", runtime_config={"allowed_tools": []})
    assert "--allowedTools" not in none.prepare(sandbox.context(none.manifest)).argv
    bad = adapter_for("claude", runtime_config={"allowed_tools": "Bash(*)"})
    with pytest.raises(AdapterError, match="allowed_tools"):
        bad.prepare(sandbox.context(bad.manifest))


def test_permission_denials_are_blockers_of_the_result() -> None:
    import json

    parser = ClaudeParser()
    denial = {
        "tool_name": "Bash",
        "tool_use_id": "toolu_1",
        "tool_input": {"command": "rm -rf build", "description": "clean"},
    }
    line = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 3,
        "result": "done",
        "permission_denials": [denial, {"tool_name": "Write", "tool_input": {"file_path": "/x"}}],
    }
    events = parser.feed(json.dumps(line).encode())
    assert parser.blockers == [
        "permission denied: Bash: rm -rf build",
        "permission denied: Write: /x",
    ]
    assert [e.kind for e in events if e.kind == "blocker"] == ["blocker", "blocker"]
    assert parser.error is None  # the run went on; the denial is said, not a failure
