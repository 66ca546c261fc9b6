"""What the dashboard says in its details: the keys a review offers, a multi-line check
command as it runs, sandbox ids told apart at 80 columns, relative times that move with the
clock, and one `/` filter whose every list says it is filtered."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.tui import fixtures
from tests.tui.conftest import settle, until
from uh_core.diff.stats import hunk_stats
from uh_core.models.sandbox import HumanEdit
from uh_core.promote.review import Review
from uh_core.promote.source import Source, Verified
from uh_tui.app import UhApp
from uh_tui.screens.review import ReviewScreen

SMALL = (80, 24)
LARGE = (160, 48)


def run(app: UhApp, size: tuple[int, int], scenario: Callable) -> None:  # type: ignore[type-arg]
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await scenario(pilot)

    asyncio.run(main())


def footer_keys(app: UhApp) -> list[str]:
    """The descriptions of the keys the footer offers now."""
    return [
        binding.description
        for _, binding, enabled, _ in app.screen.active_bindings.values()
        if binding.show and enabled
    ]


# -- the review of a branch offers no discard ------------------------------------------------


@pytest.fixture
def branch_reviewed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The review of changelog's harness branch: no sandbox behind it."""
    source = Source(
        kind="branch",
        mission_id="changelog",
        base_commit=fixtures.BASE,
        tree="b" * 40,
        diff_hash="0123456789abcdef",
        verified=Verified("passed", "verify-20260115T115900Z-abc123", "verify --branch"),
        branch="harness/changelog",
    )
    found = Review(source, fixtures.PATCH_AGREE, hunk_stats(fixtures.PATCH_AGREE))
    monkeypatch.setattr("uh_core.promote.review.review", lambda *args, **kwargs: found)


@pytest.mark.usefixtures("branch_reviewed")
@pytest.mark.parametrize("size", [SMALL, LARGE], ids=["80x24", "160x48"])
def test_a_branch_review_does_not_offer_discard(make_app, size) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="changelog")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("3", "p")  # the harness row: its branch
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="review")
        review = app.screen
        await until(pilot, lambda: review.review is not None, what="the change")
        await pilot.pause()
        assert review.branch and review.selected_sandbox() is None
        assert "Discard sandbox" not in footer_keys(app)
        assert "Discard sandbox" not in app.export_text()
        await pilot.press("ctrl+x")  # not bound here: nothing happens, nothing is said
        await pilot.pause()
        assert app.screen is review and not app.launcher.launches  # type: ignore[attr-defined]
        assert "no sandbox" not in app.export_text()

    run(app, size, scenario)


def test_a_branch_a_human_took_part_in_says_so_in_the_review(
    make_app, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    # the trailers the promotion commit would carry (Uh-Steered, Uh-Answered, Uh-Human-Lines)
    human = ("Uh-Steered: 2", "Uh-Answered: 1", "Uh-Human-Lines: 14")
    source = Source(
        kind="branch", mission_id="changelog", base_commit=fixtures.BASE, tree="b" * 40,
        diff_hash="0123456789abcdef", branch="harness/changelog",
        verified=Verified("passed", "harness-x", "harness run harness-x: the gate passed",
                          human=human),
    )  # fmt: skip
    edit = HumanEdit(
        at="2026-01-15T11:58:00.000Z", by="ana", before_tree="c" * 40, after_tree="d" * 40,
        files=["CHANGELOG.md"], added=10, removed=4,
        patch=".harness/sandboxes/sbx-changelog/human/1.patch",
    )  # fmt: skip
    found = Review(source, fixtures.PATCH_AGREE, hunk_stats(fixtures.PATCH_AGREE), human=[edit])
    monkeypatch.setattr("uh_core.promote.review.review", lambda *args, **kwargs: found)
    app = make_app(mission="changelog")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("3", "p")
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="review")
        await until(pilot, lambda: app.screen.review is not None, what="the change")
        await pilot.pause()
        shown = " ".join(app.export_text().split())
        assert "a human took part: steered 2, answered 1, 14 line(s) by hand" in shown
        assert (
            "by hand (ana): CHANGELOG.md +10 -4 .harness/sandboxes/sbx-changelog/human/1.patch"
            in shown
        )

    run(app, LARGE, scenario)


@pytest.mark.usefixtures("reviewed")
def test_a_sandbox_review_offers_discard(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="divide")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("2", "p")  # alpha's sandbox
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="review")
        await until(pilot, lambda: app.screen.review is not None, what="the change")
        await pilot.pause()
        assert "Discard sandbox" in footer_keys(app)
        assert "^x Discard sandbox" in app.export_text()

    run(app, SMALL, scenario)


# -- a multi-line check command is shown as it runs ------------------------------------------

MULTI_LINE = """\
set -e
cd src
python3 - <<'PY'
from calc.core import add
assert add(2, 2) == 4
PY"""


def test_a_multi_line_command_is_shown_line_by_line(workspace: Path, make_app) -> None:  # type: ignore[no-untyped-def]
    mission = workspace / ".harness" / "missions" / "add-subtract" / "mission.yaml"
    text = mission.read_text()
    one_line = "check_command: python3 -m unittest discover -s tests -q"
    assert one_line in text
    block = "check_command: |\n" + "".join(f"      {line}\n" for line in MULTI_LINE.splitlines())
    mission.write_text(text.replace(one_line, block.rstrip("\n"), 1))
    result = mission.with_name("verification.yaml")  # the command it ran, as it recorded it
    data = yaml.safe_load(result.read_text())
    data["acceptance_criteria"][0]["check_command"] = MULTI_LINE
    result.write_text(yaml.safe_dump(data, sort_keys=False))
    app = make_app(mission="add-subtract")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("tab")  # the criteria: unit-tests first
        await pilot.pause()
        shown = app.export_text()
        for line in MULTI_LINE.splitlines():  # each line on a row of its own, as written
            assert any(f"│ {line}  " in row for row in shown.splitlines()), shown
        assert "set -e cd src" not in shown

    run(app, LARGE, scenario)


# -- sandbox ids told apart at 80 columns ----------------------------------------------------


def test_sandbox_ids_differ_at_80_columns(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("4")
        table = app.screen.query_one("#sandboxes")
        await until(pilot, lambda: table.row_count == 6, what="the sandboxes")
        shown = [str(table.get_row_at(row)[0]) for row in range(table.row_count)]
        assert len(set(shown)) == len(shown), shown  # no two read the same
        assert all(len(cell) < len(key) for cell, (key, _) in zip(shown, table._rows, strict=True))
        for runtime in ("alpha", "beta", "gamma", "delta"):  # where the divide ones differ
            assert any(cell.startswith(f"…{runtime}-") for cell in shown), shown

    run(app, SMALL, scenario)


def test_distinct_cut_keeps_what_differs() -> None:
    from uh_tui.widgets.sandboxes_table import distinct_cut

    twins = ["sbx-divide-alpha-20260115115000", "sbx-divide-alpha-20260115120000"]
    assert [distinct_cut(i, twins, 10) for i in twins] == ["…115115000", "…115120000"]
    assert distinct_cut(twins[0], twins, 40) == twins[0]  # it fits: whole
    pair = ["sbx-divide-alpha-20260115115000", "sbx-divide-beta-20260115115000"]
    assert [distinct_cut(i, pair, 14) for i in pair] == ["…alpha-202601…", "…beta-2026011…"]


# -- relative times move with the clock ------------------------------------------------------

LATER = "2026-01-15T14:00:00.000Z"  # two hours after fixtures.FROZEN


@pytest.fixture
def ticking_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    from uh_tui import ticking

    monkeypatch.setattr(ticking, "EVERY", 0.05)


@pytest.mark.usefixtures("ticking_fast")
def test_relative_times_move_with_the_clock(make_app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Nothing on disk changes: only the (frozen) clock moves, and every `… ago` follows it
    — the sandboxes' created, the runtimes banner, the mission screen's head."""
    app = make_app(mission="divide")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("4")
        table = app.screen.query_one("#sandboxes")
        await until(pilot, lambda: table.row_count == 6, what="the sandboxes")
        created = lambda: str(table.get_row_at(0)[6])  # noqa: E731
        assert created() == "10m ago"
        await pilot.press("2")
        await until(pilot, lambda: "compared 9m ago" in app.export_text(), what="banner")
        await pilot.press("1", "enter")
        await until(pilot, lambda: "FAILED  14m ago" in app.export_text(), what="the head")

        monkeypatch.setenv("UH_FROZEN_TIME", LATER)
        await until(pilot, lambda: "FAILED  2h ago" in app.export_text(), what="the head moves")
        await pilot.press("escape", "2")
        await until(pilot, lambda: "compared 2h ago" in app.export_text(), what="banner moves")
        await pilot.press("4")
        await until(pilot, lambda: created() == "2h ago", what="created moves")

    run(app, LARGE, scenario)


@pytest.mark.usefixtures("ticking_fast")
def test_the_harness_runs_started_moves_with_the_clock(make_app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("3")
        runs = app.screen.query_one("#harness-runs")
        await until(pilot, lambda: runs.row_count > 0, what="the runs")
        started = lambda: str(runs.get_row_at(0)[2])  # noqa: E731
        before = started()
        assert before.endswith("ago") and before != "2h ago", before
        monkeypatch.setenv("UH_FROZEN_TIME", LATER)
        await until(pilot, lambda: started() != before, what="started moves")
        assert started().endswith("h ago"), started()

    run(app, LARGE, scenario)


@pytest.mark.usefixtures("ticking_fast")
def test_last_seen_moves_with_the_clock(workspace: Path, make_app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An interrupted verify: the missions table's live column and the criteria pane's
    border say when it was last seen, and keep saying it as time passes (80×24)."""
    fixtures.interrupt(workspace)
    app = make_app(mission="changelog")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        criteria = app.screen.query_one("#criteria")
        await until(pilot, lambda: "last seen" in str(criteria.border_subtitle), what="border")
        before = str(criteria.border_subtitle)
        assert "2h ago" not in before
        missions = app.screen.query_one("#missions")
        live = lambda: missions._rows[[k for k, _ in missions._rows].index("changelog")][1][4]  # noqa: E731
        assert "last seen" in str(live()) and "2h ago" not in str(live())

        monkeypatch.setenv("UH_FROZEN_TIME", LATER)
        await until(pilot, lambda: "last seen 2h ago" in str(criteria.border_subtitle))
        await until(pilot, lambda: "last seen 2h ago" in str(live()), what="the live column")

    run(app, SMALL, scenario)


# -- one `/` filter, and every pane it narrows says so ---------------------------------------


def test_every_pane_the_filter_narrows_says_so(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("slash", *"div", "enter")
        note = "filter “div”"
        screen = app.screen
        await until(pilot, lambda: note in str(screen.query_one("#missions").border_title))
        assert "missions · 1/5" in str(screen.query_one("#missions").border_title)
        assert note in str(screen.query_one("#events").border_title)
        await pilot.press("3")
        await until(pilot, lambda: note in str(screen.query_one("#harness").border_title))
        await pilot.press("4")
        await until(pilot, lambda: f"5 sandboxes · {note}" in app.export_text(), what="banner")
        await pilot.press("escape")  # clears it: every title says so
        await until(pilot, lambda: note not in app.export_text(), what="cleared")
        assert str(screen.query_one("#events").border_title) == "events"

    run(app, SMALL, scenario)
