"""Every command and the dashboard over a ``.harness/`` the TypeScript uh wrote."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import Repo


def test_mission_list_shows_ts_verdicts(ts_repo: Repo) -> None:
    result = ts_repo.uh("mission", "list", "--json")
    assert result.code == 0, result.stderr
    by_id = {m["id"]: m for m in json.loads(result.stdout)["missions"]}
    assert by_id["tsm"]["last_verdict"] == "passed"
    assert by_id["codex-e2e-smoke"]["last_verdict"] == "blocked"
    assert "unreadable" not in result.stdout + result.stderr


def test_sandbox_list_reads_the_ts_index(ts_repo: Repo) -> None:
    result = ts_repo.uh("sandbox", "list")
    assert result.code == 0, result.stderr
    assert "sbx-ts-1" in result.stdout and "sbx-tsm-hermes-20261201110958" in result.stdout


def test_tail_renders_ts_events(ts_repo: Repo) -> None:
    result = ts_repo.uh("tail", "tsm")
    assert result.code == 0, result.stderr
    out = result.stdout
    assert "0 checks, 0 criteria" not in out and "verify None passed" not in out
    assert "verification.started         started" in out
    assert "PASSED checks=1, total=4" in out
    assert "verify passed, promoted (auto-on-verify)" in out
    assert "runtime.started" in out and "runtime.usage" in out  # runs/<run>/events.ndjson
    assert "verdict.recorded" in out and "value=needs-attention" in out  # audit.log
    assert "malformed" not in result.stderr


def test_status_and_dashboard_show_ts_state(ts_repo: Repo) -> None:
    result = ts_repo.uh("status", "--json")
    assert result.code == 0, result.stderr
    snap = json.loads(result.stdout)
    tsm = next(m for m in snap["missions"] if m["mission_id"] == "tsm")
    assert tsm["verdict"] == "passed" and not tsm["problems"]
    assert [c["status"] for c in tsm["criteria"]][:3] == ["passed", "failed", "blocked"]
    assert tsm["promotion"] is not None
    assert tsm["comparison"]["status"] == "divergent"  # from runtime-comparison.md
    assert [r["runtime"] for r in tsm["runtimes"]] == ["hermes"]
    assert {s["id"] for s in snap["sandboxes"]} >= {"sbx-ts-1"}
    frame = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--root", str(ts_repo.root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert frame.returncode == 0, frame.stderr
    assert "tsm" in frame.stdout and "PASSED" in frame.stdout
    assert "unreadable" not in frame.stdout


def test_mission_show_over_ts_files(ts_repo: Repo) -> None:
    result = ts_repo.uh("mission", "show", "tsm")
    assert result.code == 0, result.stderr
    assert "verdict: passed" in result.stdout
    assert "failed     AC-2 (warn)" in result.stdout
    assert "promotion: promoted by auto-on-verify" in result.stdout
    assert "passed on hermes, verdict needs-attention" in result.stdout
    data = json.loads(ts_repo.uh("mission", "show", "tsm", "--json").stdout)
    assert data["verdict"] == "passed" and data["runs"][0]["runtime"] == "hermes"
    assert ts_repo.uh("mission", "show", "nope").code == 2


def test_once_at_a_given_size(ts_repo: Repo) -> None:
    """The TypeScript uh's ``tui --screenshot-size``: ``uh --once --size COLSxROWS``."""
    frame = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--size", "90x26", "--root", str(ts_repo.root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert frame.returncode == 0, frame.stderr
    lines = frame.stdout.rstrip("\n").split("\n")
    assert len(lines) == 26 and max(len(line) for line in lines) == 90
    bad = subprocess.run(
        [sys.executable, "-m", "uh_tui", "--once", "--size", "10x10", "--root", str(ts_repo.root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "80x24" in bad.stderr


def test_a_ts_mission_run_without_run_all_is_a_runtime_row(ts_repo: Repo) -> None:
    """Only ``runs/index.json`` (the TS ``mission run``): the runtime still shows, with the
    operator's verdict."""
    (ts_repo.root / ".harness/missions/tsm/runtime-comparison.md").unlink()
    snap = json.loads(ts_repo.uh("status", "--json").stdout)
    tsm = next(m for m in snap["missions"] if m["mission_id"] == "tsm")
    (row,) = tsm["runtimes"]
    assert (row["runtime"], row["status"], row["exit_code"]) == ("hermes", "succeeded", 0)
    assert row["error"] == "verdict: needs-attention" and not tsm["problems"]


def test_verify_in_a_ts_sandbox_whose_tree_is_gone(ts_repo: Repo) -> None:
    result = ts_repo.uh("verify", "tsm", "--sandbox", "sbx-ts-1")
    assert result.code == 2
    assert "sbx-ts-1: its work tree" in result.stderr and "does not exist" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_ts_run_and_its_verdict_in_status_and_the_mission_screen(ts_repo: Repo) -> None:
    """The TypeScript uh's ``mission run`` (its run id) and ``mission verdict`` (the operator's
    verdict on it) are in ``status --json``, ``status`` and the dashboard's mission screen — also
    while uh's own run-all row shows the same runtime — and a verdict recorded later (which
    rewrites only ``runtime-result.yaml``) shows at once."""
    import asyncio

    from tests.tui.conftest import SIZE, settle, until
    from uh_tui.app import UhApp
    from uh_tui.screens.mission import MissionScreen

    snap = json.loads(ts_repo.uh("status", "--json").stdout)
    tsm = next(m for m in snap["missions"] if m["mission_id"] == "tsm")
    assert tsm["ts_runs"] == [
        {
            "run_id": "20261201T110952Z-d06a4b",
            "status": "passed",
            "runtime": "hermes",
            "started_at": "2026-12-01T11:09:52.892Z",
            "finished_at": "2026-12-01T11:09:53.016Z",
            "exit_code": 0,
            "verdict": "needs-attention",
            "latest": True,
        }
    ]
    assert [m["ts_runs"] for m in snap["missions"] if m["mission_id"] != "tsm"] == [[], []]
    said = "TypeScript uh run 20261201T110952Z-d06a4b: passed on hermes, verdict needs-attention"
    assert said in ts_repo.uh("status").stdout
    result = ts_repo.root / ".harness/missions/tsm/runtime-result.yaml"

    async def main() -> None:
        app = UhApp(ts_repo.root, mission="tsm")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, MissionScreen))
            screen = app.screen
            assert said in (screen._head or "")  # the head's text as drawn
            # the operator's `uh mission verdict tsm pass`, as the TypeScript tool writes it
            text = result.read_text(encoding="utf-8")
            result.write_text(text.replace("value: needs-attention", "value: pass"), "utf-8")
            await until(
                pilot, lambda: "verdict pass" in (screen._head or ""), what="the new verdict"
            )

    asyncio.run(main())
    assert "verdict pass" in ts_repo.uh("status").stdout
