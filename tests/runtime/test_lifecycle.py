"""The adapter lifecycle, one method at a time, on the script kind in a real worktree."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.runtime.helpers import live_processes_with
from uh_core.adapters.base import LaunchContext, ObserveEvent
from uh_core.adapters.offline import ScriptAdapter
from uh_core.errors import AdapterError
from uh_core.layout import Layout
from uh_core.models.adapter import AdapterManifest
from uh_core.models.mission import Mission
from uh_core.sandbox.worktree import create_sandbox


def _context(repo: Repo, script: str) -> tuple[ScriptAdapter, LaunchContext]:
    manifest = AdapterManifest.model_validate(
        {"id": "s", "runtime_kind": "script", "config": {"script": script}}
    )
    entry = create_sandbox(Layout(repo.root), "m", "s")
    worktree = repo.root / entry.worktree
    artifacts = worktree / ".harness/missions/m"
    artifacts.mkdir(parents=True)
    prompt = artifacts / "prompt.md"
    prompt.write_text("do the thing\n")
    ctx = LaunchContext(Mission(id="m"), manifest, worktree, artifacts, prompt, entry.id)
    return ScriptAdapter(manifest), ctx


def _drain(adapter: ScriptAdapter, session) -> list[ObserveEvent]:
    events: list[ObserveEvent] = []
    while adapter.wait(session, 0.05) is None:
        events += adapter.observe(session)
    return events + adapter.observe(session)


def test_prepare_builds_a_plan_without_starting_anything(repo: Repo) -> None:
    adapter, ctx = _context(repo, "echo hi")
    plan = adapter.prepare(ctx)
    assert plan.argv == ["/bin/sh", "-c", "echo hi"] and plan.cwd == str(ctx.worktree)
    assert plan.env["UH_PROMPT_FILE"] == str(ctx.prompt_file)
    assert plan.env["MISSION_ID"] == "m" and plan.env["UH_SANDBOX"] == str(ctx.worktree)
    assert not Path(plan.stdout_log).exists()


def test_launch_observe_collect_close(repo: Repo) -> None:
    script = (
        'echo "$MISSION_ID $(cat "$UH_PROMPT_FILE")"; echo x > new.txt; '
        "printf '```uh-runtime-final-message\\nall done\\n```\\n'"
    )
    adapter, ctx = _context(repo, script)
    session = adapter.launch(adapter.prepare(ctx))
    events = _drain(adapter, session)
    assert events[0] == ObserveEvent("log", "m do the thing")
    result, final = adapter.collect(session)
    assert result.status == "completed" and result.exit_code == 0
    assert final == "all done" and result.summary == "all done"
    assert (ctx.worktree / "new.txt").read_text() == "x\n"
    adapter.close(session)
    assert not session.process.running()


def test_send_is_refused_by_one_shot_runtimes(repo: Repo) -> None:
    adapter, ctx = _context(repo, "sleep 0.2")
    session = adapter.launch(adapter.prepare(ctx))
    with pytest.raises(AdapterError, match="one-shot"):
        adapter.send(session, "also add docs")
    _drain(adapter, session)
    adapter.close(session)


def test_send_is_recorded_by_an_interactive_runtime(repo: Repo) -> None:
    class Interactive(ScriptAdapter):
        interactive = True

    _, ctx = _context(repo, "sleep 0.2")
    adapter = Interactive(ctx.manifest)
    session = adapter.launch(adapter.prepare(ctx))
    adapter.send(session, "also add docs")
    assert session.steering == ["also add docs"]
    _drain(adapter, session)
    adapter.close(session)


def test_cancel_stops_the_group_and_collect_says_cancelled(repo: Repo) -> None:
    marker = f"uh-lifecycle-{os.getpid()}"
    adapter, ctx = _context(
        repo, f"echo partial > part.txt; (sleep 50; : {marker}) & sleep 60; : {marker}"
    )
    session = adapter.launch(adapter.prepare(ctx))
    deadline = time.monotonic() + 10
    while len(live_processes_with(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    adapter.cancel(session, "operator")
    result, _ = adapter.collect(session)
    assert result.status == "cancelled" and result.blockers == ["cancelled: operator"]
    assert live_processes_with(marker) == []
    assert (ctx.worktree / "part.txt").exists()  # partial state stays for inspection


def test_a_crash_is_a_runtime_failure(repo: Repo) -> None:
    adapter, ctx = _context(repo, "kill -SEGV $$")
    session = adapter.launch(adapter.prepare(ctx))
    _drain(adapter, session)
    result, _ = adapter.collect(session)
    assert result.status == "failed" and result.exit_code is None
    assert result.blockers == [f"s ended with signal {int(signal.SIGSEGV)}"]


def test_script_kind_needs_a_script(repo: Repo) -> None:
    adapter, ctx = _context(repo, "")
    with pytest.raises(AdapterError, match=r"config\.script"):
        adapter.prepare(ctx)
