"""hermes: ``hermes -z "<prompt>" --usage-file F``, the final response on stdout."""

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
from uh_core.adapters.hermes import ARG_MAX_BYTES
from uh_core.adapters.registry import make_adapter
from uh_core.adapters.usage import Usage
from uh_core.errors import AdapterError
from uh_core.models.adapter import AdapterManifest


def hermes(fake_cli: FakeFactory, stdout: str, **kwargs: Any) -> FakeCli:
    return fake_cli(
        "hermes",
        stdout=fixture("hermes", stdout),
        version="Hermes Agent v0.19.0 (2026.7.20)",
        **kwargs,
    )


def test_command_line_is_the_one_checked_against_help(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    side = {"--usage-file": fixture("hermes", "success.usage.json")}
    cli = hermes(fake_cli, "success.txt", side_files=side)
    adapter = adapter_for("hermes")
    ctx = sandbox.context(adapter.manifest)
    plan = adapter.prepare(ctx)
    prompt = sandbox.prompt_file.read_text(encoding="utf-8")
    usage_file = sandbox.artifacts / "hermes-usage.json"
    assert plan.argv == ["hermes", "-z", prompt, "--usage-file", str(usage_file)]
    assert_flags_in_help(plan.argv, help_text("hermes", "help-root.txt"))
    assert plan.stdin_file is None
    assert plan.side_files == {"usage": str(usage_file)}
    drive(adapter, ctx)
    assert cli.argv() == plan.argv[1:]  # the prompt arrives intact, newlines and all
    assert cli.cwd().resolve() == sandbox.worktree.resolve()


def test_the_typescript_manifest_gives_toolsets_and_session_id(
    sandbox: Sandbox, compat: Path
) -> None:
    data = yaml.safe_load((compat / "harness" / "adapters" / "hermes.yaml").read_text())
    adapter = make_adapter(AdapterManifest.model_validate(data))
    argv = adapter.prepare(sandbox.context(adapter.manifest)).argv
    assert argv[argv.index("-t") + 1] == "terminal,file,web,skills,session_search"
    assert "--pass-session-id" in argv
    assert "-m" not in argv and "--provider" not in argv  # default_model/provider: ""
    assert_flags_in_help(argv, help_text("hermes", "help-root.txt"))

    tuned = adapter_for(
        "hermes",
        default_model="anthropic/claude-sonnet-4.6",
        default_provider="openrouter",
        default_toolsets="file, terminal",
    )
    argv = tuned.prepare(sandbox.context(tuned.manifest)).argv
    assert argv[argv.index("-m") + 1] == "anthropic/claude-sonnet-4.6"
    assert argv[argv.index("--provider") + 1] == "openrouter"
    assert argv[argv.index("-t") + 1] == "file,terminal"


def test_a_prompt_over_128_kib_is_refused(sandbox: Sandbox) -> None:
    adapter = adapter_for("hermes")
    ctx = sandbox.context(adapter.manifest)
    sandbox.prompt_file.write_bytes(b"x" * (ARG_MAX_BYTES - 1))  # fits, with its NUL
    assert len(adapter.prepare(ctx).argv[2]) == ARG_MAX_BYTES - 1
    sandbox.prompt_file.write_bytes(b"x" * ARG_MAX_BYTES)
    with pytest.raises(AdapterError, match="128 KiB") as caught:
        adapter.prepare(ctx)
    assert caught.value.fix is not None
    sandbox.prompt_file.write_bytes(b"a \0 b")
    with pytest.raises(AdapterError, match="NUL"):
        adapter.prepare(ctx)


def test_a_dry_run_before_the_prompt_file_exists_plans_the_same_prompt(
    sandbox: Sandbox,
) -> None:
    adapter = adapter_for("hermes")
    ctx = sandbox.context(adapter.manifest)
    planned = adapter.prepare(ctx).argv
    sandbox.prompt_file.unlink()
    assert adapter.prepare(ctx).argv == planned


def test_success_transcript(sandbox: Sandbox, fake_cli: FakeFactory) -> None:
    side = {"--usage-file": fixture("hermes", "success.usage.json")}
    hermes(fake_cli, "success.txt", side_files=side)
    adapter = adapter_for("hermes")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.kinds == ["log"] * 6  # -z prints the final response and nothing else
    assert run.result.status == "completed"
    assert run.final == FINAL
    parser = run.session.parser
    # cost_status "unknown": no cost
    assert parser.usage == Usage(3554 + 4096, 165, None, 4096, 0, "mock-model")
    assert parser.native_final == fixture("hermes", "success.txt").read_text().strip()


def test_chat_q_output_with_crlf_lines_still_gives_the_final_message(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    hermes(fake_cli, "success-chat-q.txt")
    adapter = adapter_for("hermes")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.final == FINAL
    assert run.session.parser.usage is None  # no usage file: nothing reported


def test_failure_transcript_fails_although_hermes_exits_0(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    side = {"--usage-file": fixture("hermes", "failure.usage.json")}
    hermes(fake_cli, "failure.txt", side_files=side)
    adapter = adapter_for("hermes")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.result.exit_code == 0
    assert run.result.status == "failed"
    assert run.result.blockers == [
        "hermes reported an error: hermes failed: HTTP 401: Incorrect API key provided: "
        "sk-bogus. You can find your API key at https://platform.openai.com/account/api-keys."
    ]
    assert run.final == ""  # the error text is not the agent's final message
    assert run.session.parser.usage is None  # all token counts null


def test_cancel_uses_sigterm_and_leaves_nothing(sandbox: Sandbox, fake_cli: FakeFactory) -> None:
    hermes(fake_cli, "success.txt", hang_after=1, on_sigint="ignore")
    adapter = adapter_for("hermes")
    assert adapter.cancel_signals == (signal.SIGTERM,)
    run = drive(adapter, sandbox.context(adapter.manifest), cancel_when=saw("log"), grace_s=60)
    assert run.result.status == "cancelled"
    # a SIGINT first (ignored mid-request) would cost the 60 s grace: no load takes that long
    assert run.result.logs["duration_ms"] < 30_000
    assert live_group_members(run.session.process.pid) == []


def test_check_reports_a_missing_binary_and_a_present_one(
    fake_cli: FakeFactory, empty_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = adapter_for("hermes").check()
    assert not missing.ok
    assert missing.reason is not None and "'hermes' not found on PATH" in missing.reason
    assert "hermes-agent" in missing.reason
    hermes(fake_cli, "success.txt")
    monkeypatch.setenv("PATH", str(fake_cli.bin_dir))
    found = adapter_for("hermes").check()
    assert (found.ok, found.version) == (True, "Hermes Agent v0.19.0 (2026.7.20)")
