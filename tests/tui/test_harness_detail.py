"""The harness view at 80×24 and 160×48: the selected mission's whole reason, fix and
hand-over rounds (``HarnessDetail``, from the ledger through uh_core's readers); the reason
column using the width it has; the runs table's headers distinct and whole; the header's
rate the one ``harness report`` prints."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from tests.tui.conftest import settle, until
from tests.tui.fake_launcher import FakeLauncher
from tests.tui.fixtures import ts
from uh_core.events.writer import EventLog
from uh_core.fileio import write_json
from uh_core.layout import Layout
from uh_core.models.events import HarnessRequirementFinished, HarnessRequirementStarted
from uh_core.models.ledger import (
    AttemptRecord,
    Handover,
    HandoverRound,
    HarnessLedger,
    RequirementRecord,
    RoundFile,
    RunSettings,
)
from uh_tui.app import UhApp
from uh_tui.screens.ask import AskScreen

SIZES = [(80, 24), (160, 48)]
RUN = "harness-20260115T113000Z-000004"
BLOCKED = (
    "rounds_exhausted: round 2 of 2 ended red at verify: failed: acceptance 3/4 passed, "
    "1 block-failed, 0 blocked; checks 0/0 passed; handed over to a human"
)
SKIPPED = "branch harness/add-subtract already exists (--force deletes and recreates it)"


def _round(n: int) -> HandoverRound:
    return HandoverRound(
        round=n,
        hypothesis=f"hypothesis of round {n}",
        files=[RoundFile(path="src/calc/core.py", added=5, removed=1)],
        verdict="red at verify: failed",
        criteria={"empty-message": "failed"},
        prompt_file=f".harness/prompts/divide-attempt-{n}.md",
    )


def _write(root: Path) -> None:
    attempts = [
        AttemptRecord(attempt=n, started_at=ts("11:30:00.000"), outcome="fail", stage="verify")
        for n in (1, 2)
    ]
    ledger = HarnessLedger(
        run_id=RUN,
        status="completed",
        started_at=ts("11:30:00.000"),
        finished_at=ts("11:31:00.000"),
        root=str(root),
        settings=RunSettings(runtime="alpha", max_attempts=2),
        requirements=[
            RequirementRecord(
                mission_id="add-subtract",
                branch="harness/add-subtract",
                outcome="skipped",
                skip_code="branch_exists",
                reason=SKIPPED,
            ),
            RequirementRecord(
                mission_id="divide",
                branch="harness/divide",
                outcome="blocked",
                reason=BLOCKED,
                failing_stage="verify",
                attempts=attempts,
                handover=Handover(
                    code="rounds_exhausted", reason=BLOCKED, rounds=[_round(1), _round(2)]
                ),
                promises=["acceptance criterion maintainer-review has no check_command"],
            ),
        ],
    )
    write_json(Layout(root).ledgers_dir / f"{RUN}.json", ledger.model_dump(mode="json"))


def _plain(widget: Static) -> str:
    """What the pane holds, scrolled or not, as plain text."""
    console = Console(width=300, file=io.StringIO(), record=True, color_system=None)
    console.print(widget.content)
    return console.export_text()


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_selected_mission_shows_whole(
    workspace: Path, make_app: Callable[..., UhApp], size: tuple[int, int]
) -> None:
    _write(workspace)
    app = make_app(view="harness")

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await until(pilot, lambda: app.screen.query_one("#harness-detail").is_mounted)
            detail = app.screen.query_one("#harness-detail")
            text = lambda: _plain(detail.query_one("#harness-detail-text", Static))  # noqa: E731
            # the first row is add-subtract: this run skipped it (its branch exists), so its
            # latest outcome is still the pass of an earlier run, with the command to promote
            promote = "uh-core promote add-subtract --branch harness/add-subtract"
            await until(pilot, lambda: promote in " ".join(text().split()), what="the command")
            assert SKIPPED not in " ".join(text().split())
            await pilot.press("down")  # changelog (running)
            await pilot.press("down")  # divide: blocked, handed over
            await until(pilot, lambda: "round 2: red at verify" in text(), what="the rounds")
            shown = " ".join(text().split())
            assert BLOCKED in shown
            assert "hypothesis of round 1" in shown and "hypothesis of round 2" in shown
            assert "unverified promise (blocked)" in shown
            assert f"run {RUN}" in shown
            assert detail.border_title == "why · divide"
            screen = app.export_text()
            # the header: the newest run (1 blocked, 1 skipped) judged 1 and passed none
            assert "pass rate: last run 0% 0/1" in screen
            # the runs table: every header whole, none alike
            header = next(line for line in screen.splitlines() if "│ run " in line)
            words = header.strip("│ ").split()
            assert words == [
                "run",
                "status",
                "started",
                "rate",
                "outcomes",
                "tries",
                "time",
                "budget",
                "cost",
            ]
            assert "…" not in header
            if size[0] >= 160:
                # the reason column takes the room left: the blocked row reads far, and ends
                # at the pane's edge, not 70 columns before it
                row = next(line for line in screen.splitlines() if "│ divide " in line)
                assert "rounds_exhausted: round 2 of 2 ended red at verify: failed" in row
                assert len(row.rstrip(" │")) > size[0] - 10, row

    asyncio.run(main())


def test_a_decided_branch_says_its_decision_not_the_advice_to_promote(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from uh_core.workspace.state import PromotionView, RequirementView
    from uh_tui.widgets.harness_detail import describe

    monkeypatch.setenv("UH_FROZEN_TIME", "2026-01-15T12:00:00.000Z")
    passed = RequirementView(
        "calc", RUN, "pass", attempts=1, max_attempts=3, branch="harness/calc",
        promote="uh-core promote calc --branch harness/calc --approved-by NAME",
    )  # fmt: skip

    def text(decided: PromotionView | None) -> str:
        out = io.StringIO()
        Console(file=out, width=160, color_system=None).print(describe(passed, None, decided))
        return out.getvalue()

    assert "next: review, then p (or uh-core promote calc" in text(None)
    landed = PromotionView(
        "promoted",
        "ada",
        "2026-01-15T11:57:00.000Z",
        "branch harness/calc",
        commit="0123456789abcdef",
    )
    shown = text(landed)
    assert "promoted: landed as 0123456789ab by ada, 3m ago" in shown and "next:" not in shown
    rejected = PromotionView("rejected", "bo", "2026-01-15T11:59:00.000Z", "branch harness/calc")
    assert "rejected: by bo, 1m ago — p to decide again" in text(rejected)
    elsewhere = PromotionView("promoted", "ada", "2026-01-15T11:57:00.000Z", "sandbox sbx-1")
    assert "next: review, then p" in text(elsewhere)  # another source's decision


def test_a_hand_over_is_answered_from_the_dashboard(
    workspace: Path, make_app: Callable[..., UhApp], launcher: FakeLauncher
) -> None:
    # divide's rounds ended blocked (its ledger and its log say so): A asks for the answer,
    # sends it through `uh-core harness answer`, and the pane says the next run continues
    _write(workspace)
    log = EventLog(Layout(workspace).mission_events("divide"), mission_id="divide", run_id=RUN)
    log.emit(HarnessRequirementStarted(branch="harness/divide", timestamp=ts("11:30:00.000")))
    log.emit(
        HarnessRequirementFinished(
            branch="harness/divide", outcome="blocked", attempts=2, code="rounds_exhausted",
            reason=BLOCKED, timestamp=ts("11:31:00.000"),
        )
    )  # fmt: skip
    app = make_app(view="harness")

    async def main() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            detail = app.screen.query_one("#harness-detail")
            text = lambda: " ".join(  # noqa: E731
                _plain(detail.query_one("#harness-detail-text", Static)).split()
            )
            await pilot.press("down", "down")  # divide: blocked, handed over
            await until(pilot, lambda: "A answers" in text(), what="the advice to answer")
            assert 'uh-core harness answer divide "…"' in text()
            await pilot.press("A")
            await until(pilot, lambda: isinstance(app.screen, AskScreen), what="the question")
            assert "handed over (rounds_exhausted)" in app.export_text()
            await pilot.press(*"use a guard", "enter")
            await until(pilot, lambda: launcher.argvs, what="the launch")
            assert launcher.argvs[-1] == [
                "uh-core", "harness", "answer", "divide", "use a guard", "--root", str(workspace)
            ]  # fmt: skip
            await until(pilot, lambda: "answered: the next harness run" in text(), what="it")
            assert "ana: use a guard" in text()
            mission = app.snapshot.mission("divide")
            assert mission is not None and mission.handover is not None
            assert mission.handover.startswith("hand-over answered by ana (1 answer)")

    asyncio.run(main())


def test_a_for_a_mission_not_handed_over_says_so_and_launches_nothing(
    workspace: Path, make_app: Callable[..., UhApp], launcher: FakeLauncher
) -> None:
    app = make_app(view="missions")

    async def main() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            await pilot.press("A")
            await until(pilot, lambda: "nothing to answer" in app.export_text(), what="why")
            assert not isinstance(app.screen, AskScreen) and launcher.argvs == []

    asyncio.run(main())


def test_s_steers_the_agent_at_work_and_says_so_elsewhere(
    workspace: Path, make_app: Callable[..., UhApp], launcher: FakeLauncher
) -> None:
    # changelog is being worked on by a harness run (the fixture's): s asks for a message
    # and sends it through `uh-core mission steer`; a mission nothing works on says so
    app = make_app(view="missions")

    async def main() -> None:
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            board = app.screen
            board.query_one("#missions").select_key("add-subtract")  # type: ignore[attr-defined]
            await pilot.press("s")
            await until(pilot, lambda: "nothing to steer" in app.export_text(), what="why")
            assert launcher.argvs == []

            async def steer(mission_id: str, text: str) -> str:
                """``s`` on the mission, ``text`` sent; the question as it was shown."""
                board.query_one("#missions").select_key(mission_id)  # type: ignore[attr-defined]
                await pilot.pause()
                await pilot.press("s")
                await until(pilot, lambda: isinstance(app.screen, AskScreen), what="question")
                asked = app.export_text()
                await pilot.press(*text, "enter")
                return asked

            assert "Steer the agent on changelog" in await steer("changelog", "stop refactoring")
            await until(pilot, lambda: launcher.argvs, what="the launch")
            assert launcher.argvs[-1][:5] == [
                "uh-core",
                "mission",
                "steer",
                "changelog",
                "stop refactoring",
            ]
            # divide's runtime epsilon is at work under `mission run`: that one is steered
            await until(pilot, lambda: not isinstance(app.screen, AskScreen), what="closed")
            assert "mission run on epsilon" in await steer("divide", "use a guard")
            await until(pilot, lambda: len(launcher.argvs) == 2, what="the second launch")
            assert launcher.argvs[-1][3:7] == ["divide", "use a guard", "--runtime", "epsilon"]

    asyncio.run(main())
