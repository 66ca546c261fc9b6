"""Cancelling: a verify whose request the client cancels is interrupted (its record
written, its check stopped); a background run is cancelled as ``mission cancel`` does."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import anyio
import yaml

from tests.mcp.conftest import TRANSPORTS, connect, events_of, stdio, until

SLOW_MISSION = """schema_version: uh.mission.v0
id: slow
title: A criterion that takes ten minutes
objective: Nothing; the check sleeps.
acceptance_criteria:
  - id: sleeps
    description: Sleeps.
    check_command: sleep 600.{tag}
"""


_TAGS = itertools.count(1)


def _tag() -> str:
    """Digits no other test's ``sleep`` has: this process's pid and a counter."""
    return f"{os.getpid()}{next(_TAGS):03d}"


def _running(tag: str) -> bool:
    """Is a ``sleep 600.<tag>`` still running (ours only: the tag is this test's)?"""
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if f"sleep 600.{tag}".encode() in cmdline:
            return True
    return False


@TRANSPORTS
def test_cancelling_a_verify_interrupts_it(demo: Path, transport: str) -> None:
    tag = _tag()
    folder = demo / ".harness/missions/slow"
    folder.mkdir()
    (folder / "mission.yaml").write_text(SLOW_MISSION.format(tag=tag))

    async def scenario() -> None:
        async with connect(transport, demo) as client:
            seen: list[str | None] = []
            with anyio.CancelScope() as scope:

                async def on_progress(
                    done: float, total: float | None, message: str | None
                ) -> None:
                    seen.append(message)
                    scope.cancel()  # as soon as it runs: the criterion sleeps ten minutes

                await client.call_tool(
                    "verify_mission", {"mission_id": "slow"}, progress_callback=on_progress
                )
            assert seen == ["verification started"]

            async def finished() -> Any:
                events = await events_of(client, "slow")
                return [e for e in events if e["event"] == "verification.finished"]

            done = await until(finished, "the interrupted verify never finished its record")
            assert done[0]["status"] != "passed"
            await until(lambda: _false(_running(tag)), "the check outlived the cancel")
            assert (folder / "verification.yaml").is_file()
            # and the server goes on
            assert not (await client.call_tool("list_missions", {})).is_error

    anyio.run(scenario)


async def _false(value: bool) -> bool:
    return not value


def test_cancel_a_background_run(demo: Path) -> None:
    tag = _tag()
    _slow(demo, tag)

    async def scenario() -> None:
        async with stdio(demo) as client:
            started = await client.call_tool(
                "start_run", {"kind": "run", "mission_id": "divide", "runtime": "slow"}
            )
            assert not started.is_error, started.content
            run_id = started.structured_content["run_id"]  # type: ignore[index]

            async def agent_started() -> Any:
                events = await events_of(client, "divide")
                return any(e["event"] == "runtime.started" for e in events) and _running(tag)

            await until(agent_started, "the run never started its agent")
            cancelled = await client.call_tool("cancel_run", {"run_id": run_id, "reason": "test"})
            assert not cancelled.is_error, cancelled.content
            status = cancelled.structured_content
            assert status is not None and status["state"] == "cancelled", status
            assert status["exit_code"] is not None or status["signal"], status
            assert status["cancel"][0]["cancelled"], status["cancel"]
            events = await events_of(client, "divide")
            assert any(e["event"] == "runtime.cancelled" for e in events)
            assert not _running(tag)

    anyio.run(scenario)


def _slow(demo: Path, tag: str) -> None:
    """A runtime ``slow`` (the demo's alpha) whose agent sleeps ten minutes, tagged."""
    adapters = demo / ".harness/adapters"
    manifest = yaml.safe_load((adapters / "alpha.yaml").read_text())
    manifest["id"] = "slow"
    manifest["config"]["script"] = f"sleep 600.{tag}\n"
    (adapters / "slow.yaml").write_text(yaml.safe_dump(manifest))


def test_a_run_outlives_its_server_and_another_server_cancels_it(demo: Path) -> None:
    tag = _tag()
    _slow(demo, tag)

    async def scenario() -> None:
        async with stdio(demo) as first:
            started = await first.call_tool(
                "start_run", {"kind": "run", "mission_id": "divide", "runtime": "slow"}
            )
            assert not started.is_error, started.content
            run_id = started.structured_content["run_id"]  # type: ignore[index]
            await until(lambda: _false(_running(tag)), "the run never started its agent")
        # the first server is gone (its client closed it): the run goes on, and a second
        # server for the same root knows it by its id
        async with stdio(demo) as second:
            status = (await second.call_tool("run_status", {"run_id": run_id})).structured_content
            assert status is not None and status["state"] == "running", status
            listed = (await second.call_tool("run_status", {})).structured_content
            assert listed is not None
            assert [r["run_id"] for r in listed["runs"]] == [run_id]
            cancelled = await second.call_tool("cancel_run", {"run_id": run_id, "reason": "t"})
            assert not cancelled.is_error, cancelled.content
            done = cancelled.structured_content
            assert done is not None and done["state"] == "cancelled", done
            assert done["exit_code"] is not None or done["signal"], done
            assert done["result"]["status"] == "cancelled", done["result"]
            assert not _running(tag)
        # a run whose supervisor vanished without recording an end is interrupted, never
        # running
        folder = _registry()
        other = folder / "run-19700101T000000Z-dead00.json"
        gone = json.loads((folder / f"{run_id}.json").read_text())
        gone |= {"run_id": other.stem, "supervisor_pid": 2**22 - 1, "finished_at": None}
        other.write_text(json.dumps(gone))
        async with stdio(demo) as third:
            status = (
                await third.call_tool("run_status", {"run_id": other.stem})
            ).structured_content
            assert status is not None and status["state"] == "interrupted", status
            assert "supervisor is gone" in status["interrupted"]

    anyio.run(scenario)


def _registry() -> Path:
    """The run registry of this test's root (under its state folder)."""
    state = Path(os.environ["UH_STATE_DIR"])
    return next(state.rglob("mcp-runs"))
