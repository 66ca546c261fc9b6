"""Every tool, called through the SDK's client over stdio and over HTTP on the demo, answers
what the CLI's ``--json`` answers; bad input is a tool error with the CLI's own line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from tests.mcp.conftest import TIMEOUT_S, TRANSPORTS, connect, until

if TYPE_CHECKING:  # the SDK is imported where it is used (tests/mcp/conftest.py says why)
    from mcp import Client

TOOLS = {
    "list_missions",
    "show_mission",
    "validate_mission",
    "verify_mission",
    "classify_diff",
    "dry_run",
    "start_run",
    "run_status",
    "cancel_run",
    "tail_events",
    "harness_plan",
    "harness_report",
    "answer_handover",
    "steer_mission",
}

PATCH = """diff --git a/src/calc/core.py b/src/calc/core.py
--- a/src/calc/core.py
+++ b/src/calc/core.py
@@ -1 +1,2 @@
 x = 1
+y = 2
diff --git a/tests/test_core.py b/tests/test_core.py
--- a/tests/test_core.py
+++ b/tests/test_core.py
@@ -1 +1,2 @@
 a = 1
+b = 2
"""


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uh_core", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )


async def ok(client: Client, name: str, args: dict[str, Any] | None = None) -> Any:
    result = await client.call_tool(name, args or {})
    assert not result.is_error, (name, result.content)
    return result.structured_content


async def refused(client: Client, name: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(name, args)
    assert result.is_error, (name, result.structured_content)
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in text
    return text


@TRANSPORTS
def test_every_tool_on_the_demo(demo: Path, transport: str) -> None:
    async def scenario() -> None:
        async with connect(transport, demo) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            assert not any("promot" in name for name in tools)  # promotion stays a person's
            # `verify --sandbox` may auto-promote: the tool cannot reach it
            assert "sandbox" not in tools["verify_mission"].input_schema["properties"]
            assert "Never promotes" in (tools["start_run"].description or "")

            listing = await ok(client, "list_missions")
            assert listing == json.loads(cli(demo, "mission", "list", "--json").stdout)
            assert {m["id"] for m in listing["missions"]} == {
                "add-subtract",
                "changelog",
                "divide",
                "mean",
            }

            progress: list[tuple[float, float | None, str | None]] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                progress.append((done, total, message))

            result = await client.call_tool(
                "verify_mission", {"mission_id": "add-subtract"}, progress_callback=on_progress
            )
            assert not result.is_error, result.content
            record = result.structured_content
            assert record is not None and record["status"] == "passed"
            # one notification as it starts, then one per required check and criterion
            assert [p[0] for p in progress] == [0, 1, 2, 3, 4]
            assert {p[1] for p in progress} == {4}
            assert progress[-1][2] == "documented: passed"

            shown = await ok(client, "show_mission", {"mission_id": "add-subtract"})
            assert shown["row"]["last_verdict"] == "passed"
            assert shown["verification"]["run_id"] == record["run_id"]
            assert shown["mission"]["id"] == "add-subtract"

            text = (demo / ".harness/missions/divide/mission.yaml").read_text()
            valid = await ok(client, "validate_mission", {"content": text})
            assert valid["valid"] is True and valid["missions"][0]["id"] == "divide"
            broken = await ok(client, "validate_mission", {"content": "id: [unclosed\n"})
            assert broken["valid"] is False
            assert broken["missions"][0]["errors"][0].startswith("mission.yaml:")

            classified = await ok(client, "classify_diff", {"patch": PATCH})
            assert classified == {
                "tests": ["tests/test_core.py"],
                "source": ["src/calc/core.py"],
                "other": [],
            }
            (demo / "change.diff").write_text(PATCH)
            assert await ok(client, "classify_diff", {"path": "change.diff"}) == classified

            plan = await ok(client, "dry_run", {"mission_id": "divide", "runtime": "alpha"})
            cli_plan = json.loads(
                cli(demo, "mission", "dry-run", "divide", "--runtime", "alpha", "--json").stdout
            )
            assert plan["prompt"] == cli_plan["prompt"]

            first = await ok(client, "tail_events", {"mission_id": "add-subtract"})
            kinds = [e["event"] for e in first["events"]]
            assert kinds[0] == "verification.started" and kinds[-1] == "verification.finished"
            again = await ok(
                client, "tail_events", {"cursor": first["cursor"], "mission_id": "add-subtract"}
            )
            assert again["events"] == [] and again["cursor"] == first["cursor"]
            everything = await ok(client, "tail_events", {"limit": 1})
            assert everything["events"] and "audit" in everything["cursor"]

            harness = await ok(client, "harness_plan")
            assert harness == json.loads(cli(demo, "harness", "plan", "--json").stdout)
            report = await ok(client, "harness_report")
            assert report == json.loads(cli(demo, "harness", "report", "--json").stdout)

            started = await ok(
                client, "start_run", {"kind": "run", "mission_id": "divide", "runtime": "alpha"}
            )
            assert started["state"] == "running" or started["exit_code"] is not None

            async def ended() -> Any:
                status = await ok(client, "run_status", {"run_id": started["run_id"]})
                return status if status["state"] == "exited" else None

            status = await until(ended, "the run never ended")
            assert status["exit_code"] == 0, status["stderr"]
            assert status["result"]["status"] == "succeeded"

            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == ["harness_prompt"]
            prompt = await client.get_prompt("harness_prompt", {"mission_id": "divide"})
            expected = cli(demo, "harness", "prompt", "divide").stdout
            assert prompt.messages[0].content.text == expected  # type: ignore[union-attr]

    anyio.run(scenario)


@TRANSPORTS
def test_bad_input_is_a_tool_error_with_the_cli_line(demo: Path, transport: str) -> None:
    (demo / ".harness/missions/broken").mkdir()
    (demo / ".harness/missions/broken/mission.yaml").write_text("id: broken\ntitle: [oops\n")

    def cli_line(*args: str) -> str:
        result = cli(demo, *args)
        assert result.returncode == 2, result
        return result.stderr.strip().splitlines()[-1].removeprefix("uh-core: error: ")

    async def scenario() -> None:
        async with connect(transport, demo) as client:
            for tool, args, command in (
                ("verify_mission", {"mission_id": "nope"}, ("verify", "nope")),
                ("verify_mission", {"mission_id": "broken"}, ("verify", "broken")),
                ("show_mission", {"mission_id": "nope"}, ("verify", "nope")),
                ("tail_events", {"mission_id": "nope"}, ("tail", "nope")),
                (
                    "dry_run",
                    {"mission_id": "divide", "runtime": "nope"},
                    ("mission", "dry-run", "divide", "--runtime", "nope"),
                ),
                ("verify_mission", {"mission_id": "../etc"}, ("verify", "../etc")),
                (  # nothing works on it: the CLI's refusal, nothing written
                    "steer_mission",
                    {"mission_id": "divide", "message": "stop"},
                    ("mission", "steer", "divide", "stop"),
                ),
                (  # nothing handed over: the CLI's refusal, nothing written
                    "answer_handover",
                    {"mission_id": "divide", "answer": "-use a guard"},
                    ("harness", "answer", "divide", "use a guard"),
                ),
            ):
                assert await refused(client, tool, args) == cli_line(*command), tool
            outside = await refused(client, "classify_diff", {"path": "../../etc/passwd"})
            assert "outside the root" in outside
            both = await refused(client, "classify_diff", {"patch": PATCH, "path": "x.diff"})
            assert "exactly one" in both
            assert "no run" in await refused(client, "run_status", {"run_id": "run-99"})
            assert "needs runtime" in await refused(
                client, "start_run", {"kind": "run", "mission_id": "divide"}
            )
            many = {"kind": "run-all", "mission_id": "divide", "repeat": 21}
            assert "from 1 to 20, not '21'" in await refused(client, "start_run", many)
            # the server is still there and answering
            listing = await ok(client, "list_missions")
            assert any(m["id"] == "broken" and m["error"] for m in listing["missions"])

    anyio.run(scenario)
