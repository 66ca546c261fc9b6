"""codex: the verified ``codex exec --json`` command line and its recorded JSONL output."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
import yaml

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
from uh_core.adapters.codex import CodexParser, short_command
from uh_core.adapters.registry import make_adapter
from uh_core.adapters.usage import Usage
from uh_core.errors import AdapterError
from uh_core.models.adapter import AdapterManifest

RECORDED_CWD = "/tmp/run-codex"


def codex(
    fake_cli: FakeFactory,
    stdout: str = "success.jsonl",
    last: Path | None = None,
    **kwargs: Any,
) -> FakeCli:
    side = {"-o": last or fixture("codex", "success.last-message.txt")}
    return fake_cli(
        "codex",
        stdout=fixture("codex", stdout),
        side_files=side,
        version="codex-cli 0.171.0",
        recorded_cwd=RECORDED_CWD,
        **kwargs,
    )


def test_command_line_is_the_one_checked_against_help(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    fake = codex(fake_cli)
    adapter = adapter_for("codex")
    ctx = sandbox.context(adapter.manifest)
    plan = adapter.prepare(ctx)
    last = sandbox.artifacts / "codex-last-message.txt"
    assert plan.argv == [
        "codex",
        "exec",
        "--json",
        "--cd",
        str(sandbox.worktree),
        "--sandbox",
        "workspace-write",
        "--skip-git-repo-check",
        "-o",
        str(last),
        "-c",
        'approval_policy="never"',
        "-",
    ]
    assert_flags_in_help(plan.argv, help_text("codex", "help-exec.txt"))
    assert plan.stdin_file == str(sandbox.prompt_file)
    assert plan.cwd == str(sandbox.worktree)
    assert plan.side_files == {"last_message": str(last)}
    assert last.is_relative_to(sandbox.worktree / ".harness")  # kept out of the diff

    run = drive(adapter, ctx)
    assert fake.argv() == plan.argv[1:]
    assert fake.stdin() == sandbox.prompt_file.read_text(encoding="utf-8")
    assert fake.cwd().resolve() == sandbox.worktree.resolve()
    assert run.result.logs["last_message"] == str(last)


def test_success_transcript(sandbox: Sandbox, fake_cli: FakeFactory) -> None:
    codex(fake_cli)
    adapter = adapter_for("codex")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.kinds == ["status", "status", "tool_call", "file_change", "log", "status"]
    assert run.messages("status")[0].startswith("thread started (01a228f2-")
    assert run.messages("tool_call") == ["$ cat a.txt"]
    assert run.messages("file_change") == ["a.txt"]
    assert run.result.status == "completed"
    assert run.result.blockers == []
    assert run.final == FINAL
    parser = run.session.parser
    assert parser.usage == Usage(16500, 180, None, cache_read_tokens=8192)
    assert parser.native_final == fixture("codex", "success.last-message.txt").read_text()
    assert parser.error is None


def test_last_message_file_is_the_fallback_when_stdout_lost_it(
    sandbox: Sandbox, fake_cli: FakeFactory, tmp_path: Path
) -> None:
    lines = fixture("codex", "success.jsonl").read_text().splitlines()
    partial = tmp_path / "no-agent-message.jsonl"
    partial.write_text("\n".join(ln for ln in lines if "agent_message" not in ln) + "\n")
    fake_cli(
        "codex",
        stdout=partial,
        side_files={"-o": fixture("codex", "success.last-message.txt")},
    )
    adapter = adapter_for("codex")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.final == FINAL
    assert run.result.status == "completed"


@pytest.mark.parametrize("exit_code", [0, 1])
def test_failure_transcript_fails_whatever_the_exit_code(
    sandbox: Sandbox, fake_cli: FakeFactory, tmp_path: Path, exit_code: int
) -> None:
    empty = tmp_path / "empty.txt"
    empty.write_text("")  # on failure codex leaves the -o file empty
    codex(fake_cli, "failure.jsonl", last=empty, exit_code=exit_code)
    adapter = adapter_for("codex")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.kinds == ["status", "status", "blocker"]
    assert "401 Unauthorized" in run.messages("blocker")[0]
    assert run.result.status == "failed"
    assert run.final == ""
    assert "401 Unauthorized" in (run.session.parser.error or "")
    assert any("401 Unauthorized" in b for b in run.result.blockers)
    if exit_code != 0:
        assert run.result.blockers[0] == "codex ended with exit 1"


def test_unreachable_endpoint_never_ends_and_is_stopped_as_timed_out(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    fake = codex(fake_cli, "failure-unreachable.jsonl", hang_after=5)
    adapter = adapter_for("codex")
    adapter.grace_s = 0.3  # type: ignore[misc]
    run = drive(adapter, sandbox.context(adapter.manifest), cancel_when=saw("blocker", 3))
    assert run.result.status == "cancelled"
    assert (
        run.messages("blocker")[:3]
        == ["Reconnecting... waiting for network (Connection failed: error sending request)"] * 3
    )
    assert fake.ran()


def test_collect_of_a_run_still_going_stops_it_as_timed_out(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    codex(fake_cli, "failure-unreachable.jsonl", hang_after=5)
    adapter = adapter_for("codex")
    adapter.grace_s = 0.3  # type: ignore[misc]
    session = adapter.launch(adapter.prepare(sandbox.context(adapter.manifest, timeout_s=0.5)))
    try:
        assert adapter.wait(session, 0.5) is None  # still "reconnecting"
        result, _ = adapter.collect(session)
    finally:
        adapter.close(session)
    assert result.status == "failed"
    assert result.blockers[0] == "timed out after 0.5 s"
    assert "Reconnecting" in (session.parser.error or "")
    assert live_group_members(session.process.pid) == []


def test_cancel_escalates_past_an_ignored_sigint_and_leaves_nothing(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    codex(fake_cli, "cancelled-sigint.jsonl", hang_after=2, on_sigint="ignore")
    adapter = adapter_for("codex")
    assert adapter.cancel_signals == (signal.SIGINT, signal.SIGTERM)
    adapter.grace_s = 0.3  # type: ignore[misc]
    run = drive(adapter, sandbox.context(adapter.manifest), cancel_when=saw("status", 2))
    assert run.result.status == "cancelled"
    assert run.result.blockers[0] == "cancelled: stopped by the test"
    assert live_group_members(run.session.process.pid) == []
    assert run.session.process.wait(0) is not None


def test_check_reports_a_missing_binary_and_a_present_one(
    fake_cli: FakeFactory, empty_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = adapter_for("codex").check()
    assert not missing.ok
    assert missing.reason is not None
    assert "'codex' not found on PATH" in missing.reason
    assert "@openai/codex" in missing.reason

    fake = codex(fake_cli)
    monkeypatch.setenv("PATH", str(fake_cli.bin_dir))
    found = adapter_for("codex").check()
    assert found.ok
    assert found.version == "codex-cli 0.171.0"
    assert found.path == str(fake.path)


def test_garbage_torn_and_unknown_lines_never_break_the_parse(
    sandbox: Sandbox, fake_cli: FakeFactory, tmp_path: Path
) -> None:
    lines = fixture("codex", "success.jsonl").read_bytes().splitlines()
    noisy = [
        b"WARNING: proceeding, even though we could not update PATH",
        lines[0],
        b'{"type":"item.completed","item":',  # torn
        b'{"type":"thread.exploded","how":"future event kind"}',
        b"[1, 2, 3]",
        b"\xff\xfe\x00 binary junk",
        b'{"type":"item.completed","item":{"type":"agent_message","text":5}}',
        b'{"type":"turn.completed","usage":"not an object"}',
        *lines[1:],
    ]
    transcript = tmp_path / "noisy.jsonl"
    transcript.write_bytes(b"\n".join(noisy) + b"\n")
    fake_cli(
        "codex", stdout=transcript, side_files={"-o": fixture("codex", "success.last-message.txt")}
    )
    adapter = adapter_for("codex")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.result.status == "completed"
    assert run.final == FINAL
    assert run.session.parser.usage == Usage(16500, 180, None, 8192)  # no model configured
    assert sum(m.startswith("(not JSON)") for m in run.messages("log")) == 4


def test_parser_alone_on_a_retry_that_recovers() -> None:
    parser = CodexParser()
    parser.feed(b'{"type":"error","message":"Reconnecting... 1/5"}')
    parser.feed(b'{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":4}}')
    assert parser.error is None
    assert parser.usage == Usage(3, 4, None)


def test_short_command() -> None:
    assert short_command("/bin/bash -lc 'cat a.txt'") == "cat a.txt"
    assert short_command("/bin/bash -lc 'echo \"a b\" > c'") == 'echo "a b" > c'
    assert short_command("ls -la") == "ls -la"
    assert short_command("/bin/bash -lc 'unclosed") == "/bin/bash -lc 'unclosed"


def test_the_typescript_manifest_and_settings(sandbox: Sandbox, compat: Path) -> None:
    data = yaml.safe_load((compat / "harness" / "adapters" / "codex.yaml").read_text())
    adapter = make_adapter(AdapterManifest.model_validate(data))
    argv = adapter.prepare(sandbox.context(adapter.manifest)).argv
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    assert 'approval_policy="never"' in argv
    assert "--full-auto" not in argv and "-a" not in argv  # rejected by codex exec 0.171.0

    tuned = adapter_for(
        "codex",
        default_model="gpt-5.5",
        runtime_config={"sandbox_mode": "read-only", "model": "o4-mini"},
    )
    argv = tuned.prepare(sandbox.context(tuned.manifest)).argv
    assert argv[argv.index("--sandbox") + 1] == "read-only"
    assert argv[argv.index("-m") + 1] == "o4-mini"  # runtime_config.model wins
    assert argv[-1] == "-"
    assert_flags_in_help(argv, help_text("codex", "help-exec.txt"))

    wrong = adapter_for("codex", runtime_config={"sandbox_mode": "yolo"})
    with pytest.raises(AdapterError, match="sandbox_mode"):
        wrong.prepare(sandbox.context(wrong.manifest))
