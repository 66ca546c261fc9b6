"""80×24 is a supported size: every view shows its first rows and every key hint of its
footer (the snapshots in test_views show them; this says what must be in them)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from textual.app import App, ComposeResult
from textual.widgets._footer import FooterKey

from tests.tui.conftest import settle, until
from uh_tui.app import UhApp
from uh_tui.screens.help import HelpScreen
from uh_tui.screens.mission import MissionScreen
from uh_tui.screens.review import ReviewScreen
from uh_tui.screens.runtime import RuntimeScreen
from uh_tui.widgets.keyed_table import KeyedTable

SMALL = (80, 24)
VIEWS = {
    # keys pressed: what must be on the screen
    "missions": ((), ("broken", "changelog", "divide", "legacy", "divide-works")),
    "runtimes": (("2",), ("alpha", "beta", "gamma")),
    "harness": (("3",), ("add-subtract", "changelog", "harness-20260115T1")),
    "sandboxes": (("4",), ("…alpha-20", "…beta-20", "changelog")),
    "mission": (("enter",), ("divide-works", "zero-message", "unit-tests")),
    "runtime diff": (("2", "enter"), ("src/calc/core.py", "diff --git")),
    "review": (("2", "p"), ("src/calc/core.py", "Promote", "Defer")),
    "help": (("question_mark",), ("esc closes", "mission.verify", "UH_KEYMAP")),
}
SCREENS = {
    "mission": MissionScreen,
    "runtime diff": RuntimeScreen,
    "review": ReviewScreen,
    "help": HelpScreen,
}


@pytest.mark.usefixtures("reviewed")
@pytest.mark.parametrize("view", list(VIEWS))
def test_every_view_shows_its_first_rows_and_its_keys_at_80x24(
    make_app: Callable[..., UhApp], view: str
) -> None:
    keys, wanted = VIEWS[view]
    app = make_app(mission="divide")

    async def main() -> None:
        async with app.run_test(size=SMALL) as pilot:
            await settle(pilot)
            await pilot.press(*keys)
            if view in SCREENS:
                await until(pilot, lambda: isinstance(app.screen, SCREENS[view]), what=view)
            await pilot.pause(0.3)
            shown = app.export_text()
            missing = [word for word in wanted if word not in shown]
            assert not missing, f"{view}: {missing} not on screen:\n{shown}"
            footer = [key for key in app.screen.query(FooterKey) if key.display]
            if view != "help":  # a modal: the help box itself says how to close it
                assert footer, shown
            for key in footer:
                region = key.region
                assert region.width > 0 and region.right <= SMALL[0], (key.description, shown)
                assert key.description[:4] in shown or key.key_display in shown

    asyncio.run(main())


class _Rows(KeyedTable):
    COLUMNS = (("name", "name"), ("note", "note"))
    SHRINK = ("note",)


class _Table(App[None]):
    def compose(self) -> ComposeResult:
        yield _Rows(id="rows")

    def on_mount(self) -> None:
        table = self.query_one(_Rows)
        table.set_rows([(f"row-{i}", (f"row-{i}", "a long note " * 8)) for i in range(12)])
        table.select_key("row-9")  # before the first layout, as --mission does


def test_a_selection_made_before_the_first_layout_survives_it() -> None:
    """The first layout gives the table its width and its columns shrink: that happens in
    place, and the row selected before it stays selected (it was lost, so ``uh --mission
    ID`` opened on the first mission in a real terminal)."""
    app = _Table()

    async def main() -> None:
        async with app.run_test(size=(60, 10)) as pilot:
            await pilot.pause()
            table = app.query_one(_Rows)
            assert table.selected_key == "row-9"
            await pilot.resize_terminal(40, 10)
            await pilot.pause()
            assert table.selected_key == "row-9"
            assert str(table.get_row("row-9")[1]).endswith("…")

    asyncio.run(main())
