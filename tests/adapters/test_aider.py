"""aider: ``--message-file`` one-shot runs, plain-text stdout and the JSONL analytics log."""

from __future__ import annotations

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
from uh_core.adapters.aider import last_reply, split_stdout
from uh_core.adapters.usage import Usage
from uh_core.errors import AdapterError

SUCCESS_SIDE = {
    "--analytics-log": fixture("aider", "success.analytics.jsonl"),
    "--chat-history-file": fixture("aider", "success.chat-history.md"),
}
AUTH_ERROR = (
    "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key "
    "provided: sk-bogus. You can find your API key at "
    "https://platform.openai.com/account/api-keys. The API provider is not able to "
    "authenticate you. Check your API key."
)


def aider(fake_cli: FakeFactory, stdout: Path, **kwargs: Any) -> FakeCli:
    return fake_cli("aider", stdout=stdout, version="aider 0.86.2", **kwargs)


def test_command_line_is_the_one_checked_against_help(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    cli = aider(fake_cli, fixture("aider", "success.txt"), side_files=SUCCESS_SIDE)
    adapter = adapter_for("aider")
    ctx = sandbox.context(adapter.manifest)
    plan = adapter.prepare(ctx)
    logs = sandbox.artifacts
    assert plan.argv == [
        "aider",
        "--message-file",
        str(sandbox.prompt_file),
        "--yes-always",
        "--no-auto-commits",
        "--no-dirty-commits",
        "--no-gitignore",
        "--no-check-update",
        "--no-analytics",
        "--analytics-log",
        str(logs / "aider-analytics.jsonl"),
        "--no-show-model-warnings",
        "--no-pretty",
        "--no-stream",
        "--no-fancy-input",
        "--chat-history-file",
        str(logs / "aider.chat.md"),
        "--input-history-file",
        str(logs / "aider.input.history"),
        "--llm-history-file",
        str(logs / "aider.llm.log"),
        "--map-tokens",
        "0",
        "--edit-format",  # uh's default: "whole" (aider's for unknown models) rejects the
        "diff",  # final-message block as a file without a name, and applies nothing
        "--file=a.txt",  # an expected output that exists; new.txt does not (yet)
    ]
    assert "--yes" not in plan.argv  # not an aider flag: only a prefix of --yes-always
    assert_flags_in_help(plan.argv, help_text("aider", "help-root.txt"))
    assert plan.stdin_file is None
    assert all(
        Path(p).is_relative_to(sandbox.worktree / ".harness") for p in plan.side_files.values()
    )

    drive(adapter, ctx)
    assert cli.argv() == plan.argv[1:]
    assert cli.stdin() == ""
    assert cli.cwd().resolve() == sandbox.worktree.resolve()
    assert not (sandbox.worktree / ".aider.chat.history.md").exists()

    tuned = adapter_for(
        "aider",
        default_model="mock-model",
        default_provider="openai",
        runtime_config={"map_tokens": 1024, "edit_format": "diff"},
    )
    argv = tuned.prepare(sandbox.context(tuned.manifest)).argv
    assert argv[argv.index("--model") + 1] == "openai/mock-model"
    assert argv[argv.index("--map-tokens") + 1] == "1024"
    assert argv[argv.index("--edit-format") + 1] == "diff"
    assert_flags_in_help(argv, help_text("aider", "help-root.txt"))
    wrong = adapter_for("aider", runtime_config={"map_tokens": "lots"})
    with pytest.raises(AdapterError, match="map_tokens"):
        wrong.prepare(sandbox.context(wrong.manifest))


def test_success_transcript(sandbox: Sandbox, fake_cli: FakeFactory) -> None:
    aider(fake_cli, fixture("aider", "success.txt"), side_files=SUCCESS_SIDE)
    adapter = adapter_for("aider")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.kinds[:5] == ["status"] * 5  # banner
    assert run.messages("status")[0] == "Aider v0.86.2"
    assert set(run.kinds[5:-2]) == {"log"}  # the reply, line by line
    assert run.kinds[-2:] == ["status", "file_change"]
    assert run.messages("status")[-1].startswith("Tokens: 2.4k sent, 30 received.")
    assert run.messages("file_change") == ["a.txt"]
    assert run.result.status == "completed"
    assert run.final == FINAL
    parser = run.session.parser
    assert parser.usage == Usage(
        2400, 30, 0.0063, model="openai/mock-model"
    )  # exact, from the analytics log
    assert parser.native_final is not None
    assert parser.native_final.startswith("a.txt\n```\n<<<<<<< SEARCH")
    assert parser.error is None


def test_failure_transcript_fails_although_aider_exits_0(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    aider(
        fake_cli,
        fixture("aider", "failure.txt"),
        side_files={"--analytics-log": fixture("aider", "failure.analytics.jsonl")},
    )
    adapter = adapter_for("aider")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.result.exit_code == 0
    assert run.result.status == "failed"
    assert run.messages("blocker") == [
        "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect"
    ]
    assert run.result.blockers == [f"aider reported an error: {AUTH_ERROR}"]
    assert run.final == ""
    assert run.session.parser.usage is None


def test_no_model_reply_is_a_failure_even_without_an_error_line(
    sandbox: Sandbox, fake_cli: FakeFactory, tmp_path: Path
) -> None:
    banner = tmp_path / "banner-only.txt"
    banner.write_text("\n".join(fixture("aider", "failure.txt").read_text().splitlines()[:7]))
    aider(
        fake_cli,
        banner,
        side_files={"--analytics-log": fixture("aider", "failure.analytics.jsonl")},
    )
    adapter = adapter_for("aider")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.result.status == "failed"
    assert run.result.blockers == [
        "aider reported an error: aider sent the prompt but no model reply came back"
    ]


def test_a_stale_analytics_log_is_not_counted(sandbox: Sandbox, fake_cli: FakeFactory) -> None:
    stale = sandbox.artifacts / "aider-analytics.jsonl"
    stale.write_text(fixture("aider", "success.analytics.jsonl").read_text())
    aider(fake_cli, fixture("aider", "success.txt"))  # writes no analytics this time
    adapter = adapter_for("aider")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.session.parser.usage is None
    assert not stale.exists()
    assert run.final == FINAL  # from stdout alone
    assert run.session.parser.native_final is not None  # the reply printed on stdout
    assert "Aider v" not in run.session.parser.native_final


def test_cancel_uses_sigterm_and_leaves_nothing(sandbox: Sandbox, fake_cli: FakeFactory) -> None:
    aider(fake_cli, fixture("aider", "success.txt"), hang_after=3, on_sigint="ignore")
    adapter = adapter_for("aider")
    run = drive(
        adapter, sandbox.context(adapter.manifest), cancel_when=saw("status", 2), grace_s=60
    )
    assert run.result.status == "cancelled"
    # a SIGINT first (ignored mid-request) would cost the 60 s grace: no load takes that long
    assert run.result.logs["duration_ms"] < 30_000
    assert live_group_members(run.session.process.pid) == []


def test_check_reports_a_missing_binary_and_a_present_one(
    fake_cli: FakeFactory, empty_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = adapter_for("aider").check()
    assert not missing.ok
    assert missing.reason is not None and "'aider' not found on PATH" in missing.reason
    assert "aider-chat" in missing.reason
    aider(fake_cli, fixture("aider", "success.txt"))
    monkeypatch.setenv("PATH", str(fake_cli.bin_dir))
    found = adapter_for("aider").check()
    assert (found.ok, found.version) == (True, "aider 0.86.2")


def test_stdout_and_history_readers_on_odd_input() -> None:
    assert split_stdout([]) == ("", None)
    warning = ["Can't fetch model prices: NameResolutionError", "", "Aider v0.86.2", "Model: x", ""]
    reply, error = split_stdout([*warning, "Done.", "Tokens: 1 sent, 2 received."])
    assert (reply, error) == ("Done.", None)
    assert last_reply("") is None
    assert last_reply("#### hi\n> Tokens: 1 sent\n") is None
    assert last_reply("#### a\n\nfirst\n\n#### b\n\nsecond\n> Applied edit to x\n") == "second"
