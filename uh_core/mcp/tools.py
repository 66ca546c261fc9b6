"""The tools: each the CLI command of the same job, called in-process through its own
handler (``calls.call_json``: the ``--json`` document, the CLI's one-line refusals), or for
long work started as ``uh-core`` (``verify.py``, ``runs.py``).

No tool promotes, merges or changes the operator's branch: promotion stays a person's
decision (``uh-core promote``, ``p`` in ``uh``).
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer

from uh_core.errors import UhError
from uh_core.layout import Layout
from uh_core.mcp import events, verify
from uh_core.mcp.calls import call_json, inside, tool_error
from uh_core.mcp.runs import Runs

NEVER_PROMOTES = (
    " Never promotes: landing a change on the operator's branch stays a person's decision "
    "(`uh-core promote`, or `p` in `uh`); no tool does it."
)


@contextlib.contextmanager
def engine_errors() -> Iterator[None]:
    try:
        yield
    except UhError as exc:
        raise tool_error(exc.one_line()) from None


def _mission_detail(layout: Layout, mission_id: str) -> dict[str, Any]:
    from uh_core.compat.readers import load_verification
    from uh_core.missions import load_mission

    with engine_errors():
        loaded = load_mission(layout, mission_id)  # unknown, invalid: the CLI's message
        path = layout.verification_file(mission_id)
        record = load_verification(path) if path.is_file() else None
    return {
        "mission": loaded.mission.model_dump(mode="json", exclude_none=True),
        "warnings": loaded.warnings,
        "verification": None if record is None else record.model_dump(mode="json"),
    }


def _slug(value: str, kind: str = "mission") -> str:
    """An id checked before it reaches a command line (``-x`` is no option there)."""
    from uh_core.ids import check_id

    with engine_errors():
        return check_id(value, kind)


def register(server: MCPServer, layout: Layout, runs: Runs) -> None:
    root = str(layout.root)

    @server.tool(description="Missions with status and last verdict (`uh-core mission list`).")
    async def list_missions() -> dict[str, Any]:
        result: dict[str, Any] = await call_json("mission", "list", "--json", "--root", root)
        return result

    @server.tool(
        description="One mission: its row of `mission list` (status, last verdict, "
        "promotion), the mission as loaded, and its latest verification record."
    )
    async def show_mission(mission_id: str) -> dict[str, Any]:
        detail = await anyio.to_thread.run_sync(_mission_detail, layout, mission_id)
        listing = await call_json("mission", "list", "--json", "--root", root)
        rows = [row for row in listing["missions"] if row["id"] == mission_id]
        return {"row": rows[0] if rows else None, **detail}

    @server.tool(
        description="Validate a mission file passed as text (`uh-core mission validate "
        "--file`): every problem as `file:line:col: field: what (fix: …)`; writes nothing."
    )
    async def validate_mission(content: str, file_name: str = "mission.yaml") -> dict[str, Any]:
        name = Path(file_name).name or "mission.yaml"  # a name, never a path
        with tempfile.TemporaryDirectory(prefix="uh-mcp-") as folder:
            path = Path(folder) / name
            path.write_text(content, encoding="utf-8")
            data = await call_json(
                "mission", "validate", "--file", str(path), "--json", "--root", root
            )
        result: dict[str, Any] = json.loads(json.dumps(data).replace(str(path), name))
        return result

    @server.tool(
        description="Verify a mission (`uh-core verify ID --json`): required checks and "
        "acceptance criteria, decided passed / failed / blocked. Sends a progress "
        "notification per check and criterion; cancelling the request interrupts the "
        "verify (criteria not reached are recorded unobserved)." + NEVER_PROMOTES
    )
    async def verify_mission(
        mission_id: str, ctx: Context, repeat: int = 1, timeout_s: float = 600.0
    ) -> dict[str, Any]:
        argv = ["verify", _slug(mission_id), "--json", "--root", root]
        argv += ["--repeat", str(repeat), "--timeout", str(timeout_s)]

        async def progress(done: float, total: float | None, message: str) -> None:
            await ctx.report_progress(done, total, message)

        with engine_errors():
            result: dict[str, Any] = await verify.verify(layout, argv, mission_id, progress)
        return result

    @server.tool(
        description="Bucket the paths a unified diff touches into tests / source / other "
        "(`uh-core diff classify --json`). Pass the patch text, or a path inside the root."
    )
    async def classify_diff(
        patch: str | None = None,
        path: str | None = None,
        test_paths: list[str] | None = None,
        source_paths: list[str] | None = None,
    ) -> dict[str, Any]:
        if (patch is None) == (path is None):
            raise tool_error("pass exactly one of patch (the diff's text) or path")
        globs = [a for g in test_paths or [] for a in ("--test-path", g)]
        globs += [a for g in source_paths or [] for a in ("--source-path", g)]
        with tempfile.TemporaryDirectory(prefix="uh-mcp-") as folder:
            if patch is not None:
                target = Path(folder) / "patch.diff"
                target.write_text(patch, encoding="utf-8")
            else:
                assert path is not None
                target = inside(layout.root, path)
            argv = ["diff", "classify", str(target), *globs, "--json", "--root", root]
            result: dict[str, Any] = await call_json(*argv)
        return result

    @server.tool(
        description="The launch plan and the exact prompt of a mission on a runtime "
        "(`uh-core mission dry-run`); creates nothing."
    )
    async def dry_run(
        mission_id: str,
        runtime: str,
        force: bool = False,
        isolation: Literal["auto", "bwrap", "none"] | None = None,
    ) -> dict[str, Any]:
        argv = ["mission", "dry-run", _slug(mission_id), "--runtime", _slug(runtime, "adapter")]
        argv += ["--json"]
        argv += ["--force"] if force else []
        argv += ["--isolation", isolation] if isolation else []
        result: dict[str, Any] = await call_json(*argv, "--root", root)
        return result

    @server.tool(
        description="Start work in the background and return its run id at once: `run` "
        "(`uh-core mission run ID --runtime R`), `run-all` (`mission run-all ID`, optional "
        "runtimes, serial, repeat: each runtime N times, agree_min: the consensus patch's "
        "quorum) or `harness` (`harness run`, optional agent or runtime and "
        "requirements). Follow it with run_status, tail_events and the resources; stop it "
        "with cancel_run. The harness commits onto harness/<id> branches only." + NEVER_PROMOTES
    )
    async def start_run(
        kind: Literal["run", "run-all", "harness"],
        mission_id: str | None = None,
        runtime: str | None = None,
        runtimes: list[str] | None = None,
        serial: bool = False,
        agent: str | None = None,
        requirements: list[str] | None = None,
        repeat: int = 1,
        agree_min: int | None = None,
    ) -> dict[str, Any]:
        for value, what in ((mission_id, "mission"), (runtime, "adapter")):
            if value is not None:
                _slug(value, what)
        argv = _run_argv(kind, mission_id, runtime, runtimes, serial, agent, requirements)
        if kind == "run-all":  # checked now, as the CLI checks them
            from uh_core.runall.repeat import check_repeat

            with engine_errors():
                check_repeat(repeat)
            if agree_min is not None and agree_min < 1:
                raise tool_error(f"agree_min {agree_min}: at least 1")
            argv += ["--repeat", str(repeat)] if repeat != 1 else []
            argv += ["--agree-min", str(agree_min)] if agree_min is not None else []
        if mission_id is not None:  # an unknown or invalid mission: refused now, as the CLI
            await anyio.to_thread.run_sync(_mission_detail, layout, mission_id)
        return runs.start(kind, mission_id, argv)

    @server.tool(
        description="A run started by start_run — by this server or another for the same "
        "root, also one that has since stopped: running, exited, cancelled or interrupted; "
        "its exit code or signal, and once ended the command's `--json` result. Without "
        "run_id: every run of this root."
    )
    async def run_status(run_id: str | None = None) -> dict[str, Any]:
        if run_id is None:  # every run of this root, whichever server started it
            return {"runs": await anyio.to_thread.run_sync(runs.list)}
        return await anyio.to_thread.run_sync(runs.status, run_id)

    @server.tool(
        description="Cancel a run started by start_run (by any server for this root), as "
        "`uh-core mission cancel ID` / "
        "`harness cancel` do (partial state recorded), then wait for it to end."
    )
    async def cancel_run(run_id: str, reason: str | None = None) -> dict[str, Any]:
        return await runs.cancel(run_id, reason)

    @server.tool(
        description="Events since a cursor (`uh-core tail --json`): one mission's log, or "
        "every mission's and the audit log. Pass back the returned cursor to get only what "
        "was appended since; `limit` bounds one answer (the cursor then points at the rest)."
    )
    async def tail_events(
        mission_id: str | None = None, cursor: dict[str, int] | None = None, limit: int = 500
    ) -> dict[str, Any]:
        with engine_errors():
            return await anyio.to_thread.run_sync(
                events.since, layout, mission_id, cursor or {}, max(1, limit)
            )

    @server.tool(
        description="Each pending mission: ready, or what blocks it (`uh-core harness plan "
        "--json`); touches nothing."
    )
    async def harness_plan(force: bool = False) -> dict[str, Any]:
        extra = ["--force"] if force else []
        result: dict[str, Any] = await call_json(
            "harness", "plan", *extra, "--json", "--root", root
        )
        return result

    @server.tool(
        description="Answer a mission handed over as blocked (`uh-core harness answer ID "
        "TEXT --by BY --json`): the next harness run continues it from its last round with "
        "the answer in every prompt. `by` is recorded as who answered (default: mcp)."
    )
    async def answer_handover(mission_id: str, answer: str, by: str = "mcp") -> dict[str, Any]:
        argv = ["harness", "answer", "--by", by, "--json", "--root", root, _slug(mission_id)]
        result: dict[str, Any] = await call_json(*argv, "--", answer)  # "-x…" is text too
        return result

    @server.tool(
        description="Send a message to the agent working on a mission now (`uh-core mission "
        "steer ID TEXT --by BY --json`): its harness run continues the agent in the same "
        "sandbox with it when its turn ends (or puts it in the next round's prompt). Refused "
        "when nothing works on the mission or its runtime cannot be continued."
    )
    async def steer_mission(mission_id: str, message: str, by: str = "mcp") -> dict[str, Any]:
        argv = ["mission", "steer", "--by", by, "--json", "--root", root, _slug(mission_id)]
        result: dict[str, Any] = await call_json(*argv, "--", message)
        return result

    @server.tool(
        description="Over every harness ledger: where attempts end, pass rate, declared and "
        "measured cost (`uh-core harness report --json`)."
    )
    async def harness_report() -> dict[str, Any]:
        result: dict[str, Any] = await call_json("harness", "report", "--json", "--root", root)
        return result


def _run_argv(
    kind: str,
    mission_id: str | None,
    runtime: str | None,
    runtimes: list[str] | None,
    serial: bool,
    agent: str | None,
    requirements: list[str] | None,
) -> list[str]:
    if kind == "harness":
        if agent and runtime:
            raise tool_error("pass agent or runtime, not both")
        argv = ["harness", "run"]
        argv += ["--agent", agent] if agent else []
        argv += ["--runtime", runtime] if runtime else []
        return argv + [a for r in requirements or [] for a in ("--req", _slug(r))]
    if mission_id is None:
        raise tool_error(f"kind {kind} needs mission_id")
    if kind == "run":
        if not runtime:
            raise tool_error("kind run needs runtime")
        return ["mission", "run", mission_id, "--runtime", runtime]
    argv = ["mission", "run-all", mission_id]
    argv += ["--runtimes", ",".join(_slug(r, "adapter") for r in runtimes)] if runtimes else []
    return argv + (["--serial"] if serial else [])
