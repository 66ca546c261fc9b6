"""pi and oh-my-pi (omp): ``--mode json`` command lines and their recorded event streams."""

from __future__ import annotations

import json
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
from uh_core.adapters.pi import OhMyPiAdapter, PiAdapter, PiParser
from uh_core.adapters.registry import make_adapter
from uh_core.adapters.sentinel import extract_final_message
from uh_core.errors import AdapterError
from uh_core.models.adapter import AdapterManifest

BINARIES = {"pi": "pi", "oh-my-pi": "omp"}
VERSIONS = {"pi": "0.73.1", "oh-my-pi": "omp/18.2.3"}
FIXTURE_DIRS = {"pi": "pi", "oh-my-pi": "omp"}
SUCCESS_KINDS = [
    "status",  # session
    "status",  # agent started
    "status",  # turn 1
    "tool_call",  # read a.txt
    "status",
    "status",  # turn 2
    "tool_call",  # write a.txt
    "file_change",
    "status",
    "status",  # turn 3
    "log",  # the final text
    "status",
    "status",  # agent ended
]


def fake(fake_cli: FakeFactory, kind: str, stdout: str, **kwargs: Any) -> FakeCli:
    folder = FIXTURE_DIRS[kind]
    return fake_cli(
        BINARIES[kind],
        stdout=fixture(folder, stdout),
        version=VERSIONS[kind],
        recorded_cwd=f"/tmp/run-{folder}",
        **kwargs,
    )


def test_pi_command_line_is_the_one_checked_against_help(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    cli = fake(fake_cli, "pi", "success.jsonl")
    adapter = adapter_for("pi")
    assert isinstance(adapter, PiAdapter)
    ctx = sandbox.context(adapter.manifest)
    plan = adapter.prepare(ctx)
    assert plan.argv == [
        "pi",
        "--mode",
        "json",
        "--session-dir",  # its session kept in the round's folder: steering continues it
        str(ctx.session_dir),
        "--no-extensions",
        "--no-skills",
        "--no-prompt-templates",
        "--no-themes",
    ]
    assert_flags_in_help(plan.argv, help_text("pi", "help-root.txt"))
    assert plan.stdin_file == str(sandbox.prompt_file)
    assert plan.cwd == str(sandbox.worktree)  # pi has no --cwd
    drive(adapter, ctx)
    assert cli.argv() == plan.argv[1:]
    assert cli.stdin() == sandbox.prompt_file.read_text(encoding="utf-8")
    assert cli.cwd().resolve() == sandbox.worktree.resolve()


def test_omp_command_line_is_the_one_checked_against_help(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    cli = fake(fake_cli, "oh-my-pi", "success.jsonl")
    adapter = adapter_for("oh-my-pi")
    assert isinstance(adapter, OhMyPiAdapter)
    ctx = sandbox.context(adapter.manifest)
    plan = adapter.prepare(ctx)
    assert plan.argv == [
        "omp",
        "--print",
        "--mode",
        "json",
        "--session-dir",
        str(ctx.session_dir),
        "--cwd",
        str(sandbox.worktree),
        "--no-extensions",
        "--no-skills",
        "--no-rules",
        "--no-title",
        "--approval-mode",
        "yolo",
    ]
    assert_flags_in_help(plan.argv, help_text("omp", "help-root.txt"))
    assert plan.stdin_file == str(sandbox.prompt_file)
    drive(adapter, ctx)
    assert cli.argv() == plan.argv[1:]
    assert cli.stdin() == sandbox.prompt_file.read_text(encoding="utf-8")


def test_runtime_config_of_the_typescript_manifests(sandbox: Sandbox, compat: Path) -> None:
    for name, kind in (("pi.yaml", "pi"), ("oh-my-pi.yaml", "oh-my-pi")):
        data = yaml.safe_load((compat / "harness" / "adapters" / name).read_text())
        adapter = make_adapter(AdapterManifest.model_validate(data))
        argv = adapter.prepare(sandbox.context(adapter.manifest)).argv
        assert "--no-extensions" in argv and "--no-skills" in argv  # allow_*: false
        assert "--thinking" not in argv  # thinking: ""
        assert argv[argv.index("--mode") + 1] == "json"
        assert type(adapter) is (PiAdapter if kind == "pi" else OhMyPiAdapter)


@pytest.mark.parametrize("kind", ["pi", "oh-my-pi"])
def test_settings_become_verified_flags(sandbox: Sandbox, kind: str) -> None:
    adapter = adapter_for(
        kind,
        default_provider="mock",
        default_model="mock-model",
        runtime_config={"thinking": "high", "allow_extensions": True, "allow_skills": "false"},
    )
    argv = adapter.prepare(sandbox.context(adapter.manifest)).argv
    assert argv[argv.index("--thinking") + 1] == "high"
    assert "--no-extensions" not in argv and "--no-skills" in argv
    if kind == "pi":
        assert argv[argv.index("--provider") + 1] == "mock"
        assert argv[argv.index("--model") + 1] == "mock-model"
        assert_flags_in_help(argv, help_text("pi", "help-root.txt"))
    else:
        assert argv[argv.index("--model") + 1] == "mock/mock-model"  # omp: provider/id
        assert "--provider" not in argv
        assert_flags_in_help(argv, help_text("omp", "help-root.txt"))

    for bad in ({"mode": "rpc"}, {"thinking": "extreme"}):
        wrong = adapter_for(kind, runtime_config=bad)
        with pytest.raises(AdapterError, match=next(iter(bad))):
            wrong.prepare(sandbox.context(wrong.manifest))


@pytest.mark.parametrize("kind", ["pi", "oh-my-pi"])
def test_success_transcript(sandbox: Sandbox, fake_cli: FakeFactory, kind: str) -> None:
    fake(fake_cli, kind, "success.jsonl")
    adapter = adapter_for(kind)
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.kinds == SUCCESS_KINDS
    assert run.messages("tool_call") == ["read a.txt", "write a.txt"]
    assert run.messages("file_change") == ["a.txt"]
    assert run.messages("status")[-2:] == ["turn 3 ended (stop)", "agent ended"]
    assert run.result.status == "completed"
    assert run.final == FINAL
    parser = run.session.parser
    assert parser.native_final is not None
    assert extract_final_message(parser.native_final) == FINAL
    assert parser.usage is not None
    assert (parser.usage.input_tokens, parser.usage.output_tokens) == (
        2400 + (502 + 2048) + (652 + 2048),
        30 + 55 + 80,
    )
    assert parser.usage.cost_usd == pytest.approx(0.00765 + 0.0029454 + 0.0037704)


@pytest.mark.parametrize(("kind", "exit_code"), [("pi", 0), ("oh-my-pi", 0), ("oh-my-pi", 1)])
def test_failure_transcript_fails_whatever_the_exit_code(
    sandbox: Sandbox, fake_cli: FakeFactory, kind: str, exit_code: int
) -> None:
    fake(fake_cli, kind, "failure.jsonl", exit_code=exit_code)  # pi exits 0 here, omp 1
    adapter = adapter_for(kind)
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.kinds == ["status", "status", "status", "blocker", "status", "status"]
    assert run.messages("blocker")[0].startswith("error: 401 Incorrect API key provided")
    assert run.result.status == "failed"
    assert run.final == ""
    if exit_code == 0:
        assert any("401 Incorrect API key" in b for b in run.result.blockers)


def test_pi_unreachable_endpoint_fails_after_its_retries(
    sandbox: Sandbox, fake_cli: FakeFactory
) -> None:
    fake(fake_cli, "pi", "failure-unreachable.jsonl")
    adapter = adapter_for("pi")
    run = drive(adapter, sandbox.context(adapter.manifest))
    assert run.result.exit_code == 0
    assert run.result.status == "failed"
    assert sum(m.startswith("retry ") for m in run.messages("status")) == 3
    assert run.messages("blocker")[-1] == "retries exhausted: Connection error."
    assert run.result.blockers == ["pi reported an error: Connection error."]


def test_pi_cancel_sends_sigterm_first(sandbox: Sandbox, fake_cli: FakeFactory) -> None:
    fake(fake_cli, "pi", "success.jsonl", hang_after=5, on_sigint="ignore")
    adapter = adapter_for("pi")
    assert adapter.cancel_signals == (signal.SIGTERM,)
    run = drive(
        adapter, sandbox.context(adapter.manifest), cancel_when=saw("status", 3), grace_s=60
    )
    assert run.result.status == "cancelled"
    # SIGINT first (ignored) would cost the 60 s grace before SIGTERM: no load takes that long
    assert run.result.logs["duration_ms"] < 30_000
    assert live_group_members(run.session.process.pid) == []


def test_omp_cancel_with_sigint_records_the_aborted_turn(
    sandbox: Sandbox, fake_cli: FakeFactory, tmp_path: Path
) -> None:
    lines = fixture("omp", "cancelled-sigint.jsonl").read_text().splitlines(keepends=True)
    rest = tmp_path / "after-sigint.jsonl"
    rest.write_text("".join(lines[5:]))
    fake(fake_cli, "oh-my-pi", "cancelled-sigint.jsonl", hang_after=5, on_sigint=rest)
    adapter = adapter_for("oh-my-pi")
    run = drive(
        adapter, sandbox.context(adapter.manifest), cancel_when=saw("status", 3), grace_s=30
    )
    assert run.result.status == "cancelled"
    assert run.messages("blocker") == ["aborted: Request was aborted"]
    assert run.result.blockers == [
        "cancelled: stopped by the test",
        "oh-my-pi reported an error: Request was aborted",
    ]
    assert live_group_members(run.session.process.pid) == []


@pytest.mark.parametrize("kind", ["pi", "oh-my-pi"])
def test_check_reports_a_missing_binary_and_a_present_one(
    fake_cli: FakeFactory, empty_path: None, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    missing = adapter_for(kind).check()
    assert not missing.ok
    assert missing.reason is not None
    assert f"{BINARIES[kind]!r} not found on PATH" in missing.reason
    assert "npm install" in missing.reason
    fake(fake_cli, kind, "success.jsonl")
    monkeypatch.setenv("PATH", str(fake_cli.bin_dir))
    found = adapter_for(kind).check()
    assert (found.ok, found.version) == (True, VERSIONS[kind])


def test_parser_keeps_the_prompt_out_and_survives_garbage() -> None:
    parser = PiParser()
    prompt = "Do it.\n\n```uh-runtime-final-message\n<one paragraph>\n```\n"
    content = [{"type": "text", "text": prompt}]
    user = {"type": "message_end", "message": {"role": "user", "content": content}}
    assert parser.feed(json.dumps(user).encode()) == []
    for junk in (b"not json", b'{"type":"message_end","message":', b'{"type":"goal_updated"}'):
        parser.feed(junk)
    broken = {"type": "message_end", "message": {"role": "assistant", "content": "x", "usage": 7}}
    assert parser.feed(json.dumps(broken).encode()) == []
    assert extract_final_message(parser.transcript()) is None  # the prompt's example is not it
    notice = parser.feed(b'{"type":"notice","level":"error","message":"model not found"}')
    assert [e.kind for e in notice] == ["blocker"]


def test_a_retry_that_works_clears_the_earlier_error() -> None:
    parser = PiParser()
    failed = {"role": "assistant", "content": [], "stopReason": "error", "errorMessage": "503"}
    ok = {"role": "assistant", "content": [{"type": "text", "text": "done"}], "stopReason": "stop"}
    parser.feed(json.dumps({"type": "message_end", "message": failed}).encode())
    assert parser.error == "503"
    parser.feed(b'{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"errorMessage":"503"}')
    parser.feed(json.dumps({"type": "message_end", "message": ok}).encode())
    assert parser.error is None
    assert parser.native_final == "done"


@pytest.mark.parametrize(("kind", "flag"), [("pi", "--session"), ("oh-my-pi", "--resume")])
def test_a_steered_turn_resumes_its_own_session_from_the_rounds_folder(
    sandbox: Sandbox, kind: str, flag: str
) -> None:
    from uh_core.adapters.base import Continuation

    adapter = adapter_for(kind)
    ctx = sandbox.context(adapter.manifest)
    turn = Continuation("whole prompt", "the steering", "use a + b", "0190-abc", 1)
    follow = adapter.continue_with(ctx, turn)
    assert follow is not None and follow.session_dir == ctx.session_dir  # the same session
    argv = adapter.prepare(follow).argv
    assert argv[argv.index(flag) + 1] == "0190-abc"
    assert follow.prompt_file.read_text() == "the steering"  # the new message alone
    assert str(ctx.session_dir) in adapter.writable_paths(follow)  # writable under bwrap
    assert_flags_in_help(argv, help_text("omp" if kind == "oh-my-pi" else "pi", "help-root.txt"))
    unknown = Continuation("whole prompt", "the steering", "use a + b", None, 1)
    assert adapter.continue_with(ctx, unknown) is None  # no session said: not continued
    # an id is read from the CLI's output, which the agent's own commands can write to: one
    # shaped like an option never reaches a command line
    for forged in ("--dangerously-skip-permissions", "-x", "a b", "id;rm", ""):
        shaped = Continuation("whole prompt", "the steering", "use a + b", forged, 1)
        assert adapter.continue_with(ctx, shaped) is None, forged
