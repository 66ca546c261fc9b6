"""The review flow in Mission Control, end to end with the real ``uh-core``: `p` on a sandbox
opens the change, its verification and the last decision; the decision is a real
``uh-core promote`` whose outcome arrives through the event log; a refusal shows in place;
`ctrl+x` discards the sandbox after a confirmation."""

from __future__ import annotations

import asyncio

from textual.pilot import Pilot

from tests.promote.conftest import GOOD, Project, project  # noqa: F401  (the fixture)
from tests.tui.conftest import SIZE, settle, until
from uh_core.git import git
from uh_tui.app import UhApp
from uh_tui.launch import Launcher
from uh_tui.screens.confirm import ConfirmScreen
from uh_tui.screens.review import ReviewScreen


def _app(project: Project) -> UhApp:  # noqa: F811
    return UhApp(project.root, view="sandboxes", mission="calc", launcher=Launcher())


async def _open_review(pilot: Pilot[None], app: UhApp) -> ReviewScreen:
    """``p`` on the sandboxes view, then wait until the review has read its change."""
    await settle(pilot)
    await pilot.press("p")
    await until(pilot, lambda: isinstance(app.screen, ReviewScreen), what="review")
    review = app.screen
    assert isinstance(review, ReviewScreen)
    await until(pilot, lambda: review.review is not None, what="the change")
    return review


def test_review_then_promote_then_discard(project: Project) -> None:  # noqa: F811
    sandbox = project.sandbox({"src/calc.py": GOOD, "tests/test_calc.py": "# test\n"})
    assert project.verify(sandbox).code == 0
    app = _app(project)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            review = await _open_review(pilot, app)
            assert review.review is not None
            assert review.review.flags == ("--sandbox", sandbox.id)
            assert review.review.source.verified.status == "passed"
            await pilot.pause()
            shown = app.export_text()
            assert sandbox.id in shown and "verification passed" in shown

            await pilot.click("#review-promoted")  # no name yet: refused in place
            await pilot.pause()
            assert not app.results and "type your name" in app.export_text()
            await pilot.press(*"ada")
            await pilot.click("#review-promoted")
            await until(pilot, lambda: app.results, timeout=60, what="uh-core promote")
            assert app.results[-1].ok, app.results[-1].error
            assert app.results[-1].launch.argv[:6] == (
                "uh-core", "promote", "calc", "--sandbox", sandbox.id, "--decision",
            )  # fmt: skip
            mission = lambda: app.snapshot.mission("calc")  # noqa: E731
            await until(
                pilot,
                lambda: mission().promotion is not None,  # type: ignore[union-attr]
                what="promotion.yaml through the reader",
            )
            assert mission().promotion.decision == "promoted"  # type: ignore[union-attr]
            await until(
                pilot,
                lambda: "last decision promoted by ada" in app.export_text(),
                what="the head updated from the files",
            )
            assert "ada" in git(project.root, "log", "-1", "--format=%B")

            review.query_one("#review-approver").focus()
            await pilot.press("ctrl+x")  # discards with the name box focused
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirm")
            await pilot.press("y")
            await until(
                pilot,
                lambda: not any(s.id == sandbox.id for s in app.snapshot.sandboxes),
                timeout=60,
                what="the sandbox discarded",
            )

    asyncio.run(main())


def test_an_unverified_sandbox_is_refused_in_place_and_nothing_changes(project: Project) -> None:  # noqa: F811
    sandbox = project.sandbox({"src/calc.py": GOOD})
    head_before = git(project.root, "rev-parse", "HEAD")
    app = _app(project)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await _open_review(pilot, app)
            await pilot.pause()
            assert "promoting needs force" in app.export_text()
            await pilot.press(*"bob")
            await pilot.click("#review-promoted")
            await until(pilot, lambda: app.results, timeout=60, what="uh-core promote")
            result = app.results[-1]
            assert not result.ok and result.error and "exit 1" in result.error
            await pilot.pause()
            assert "✗ promote calc" in app.export_text()
            assert app.snapshot.mission("calc").promotion is None  # type: ignore[union-attr]
            assert sandbox.id in {s.id for s in app.snapshot.sandboxes}

    asyncio.run(main())
    assert git(project.root, "rev-parse", "HEAD") == head_before
