"""Verdict badges: every verdict word has its status colour as a badge (``PROMOTED`` green,
as ``promoted`` is; ``INTERRUPTED`` yellow), and a mission promoted onto main shows it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from tests.tui import fixtures
from tests.tui.conftest import settle
from uh_core.layout import Layout
from uh_core.models.promotion import PromotionDecision
from uh_core.promote.record import write_decision
from uh_tui import look
from uh_tui.app import UhApp
from uh_tui.widgets.keyed_table import KeyedTable


def test_a_badge_has_the_colour_of_its_status_word() -> None:
    assert str(look.badge("promoted").style) == "bold black on green"
    assert look.badge("promoted").plain == " PROMOTED "
    expected = {
        "passed": "green",
        "pass": "green",
        "promoted": "green",
        "failed": "red",
        "fail": "red",
        "rejected": "red",
        "blocked": "yellow",
        "interrupted": "yellow",
        "skipped": "yellow",
        "running": "cyan",
        "divergent": "magenta",
        "agreement": "green",
        "pending": "grey50",  # a dim word: a grey badge
        "something-new": "grey50",
    }
    for word, colour in expected.items():
        assert str(look.badge(word).style) == f"bold black on {colour}", word
    for word, style in look.STATUS_STYLE.items():
        if word == "-":
            continue
        colour = next((p for p in style.split() if p not in ("bold", "dim")), "grey50")
        assert str(look.badge(word).style) == f"bold black on {colour}", word
    assert look.badge(None).plain == " - " and str(look.badge("-").style) == "dim"


def test_the_missions_note_says_green_on_its_branch_or_handed_over() -> None:
    """The verdict column is the main checkout's; a harness green awaiting review, or a
    mission handed over to a human, is said in the note beside it."""
    from uh_core.workspace.state import HarnessProgressView, MissionView
    from uh_tui.widgets.missions_table import _note

    green = HarnessProgressView("harness-1", "pass", branch="harness/m")
    assert _note(MissionView("m", verdict="failed", harness=green), False).plain == (
        "● green: review"
    )
    assert _note(MissionView("m", verdict="promoted", harness=green), False).plain == ""
    handed = MissionView("m", handover="handed over (no_progress), waiting for a human")
    assert _note(handed, False).plain == "⚑ handed over"
    assert _note(MissionView("m"), False).plain == ""


def test_a_promoted_mission_shows_a_green_badge(
    workspace: Path, make_app: Callable[..., UhApp]
) -> None:
    """divide's alpha sandbox promoted onto main after its last verification (11:45): its
    verdict on main is ``PROMOTED`` until a verification after it."""
    write_decision(
        Layout(workspace),
        PromotionDecision(
            mission_id="divide",
            decision="promoted",
            approved_by="ada",
            promoted_at=fixtures.ts("11:55:00.000"),
            source="sandbox",
            sandbox_id=fixtures.sandbox_id("alpha"),
            runtime="alpha",
            base_commit=fixtures.BASE,
            source_tree="a" * 40,
            diff_hash="5f6c18574b018976",
            audit_event_id="promotion-1",
        ),
        None,
    )
    app = make_app()

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot)
            verdict = app.screen.query_one("#missions", KeyedTable).get_row("divide")[2]
            assert str(verdict) == " PROMOTED "
            assert str(verdict.style) == "bold black on green"  # type: ignore[union-attr]

    asyncio.run(main())
