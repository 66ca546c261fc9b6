"""Every key binding: the exact ``uh-core`` argv it launches (through a fake launcher that
writes the events the real command would), and the view updating from those events."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.tui.conftest import SIZE, settle, until
from tests.tui.fake_launcher import FakeLauncher
from uh_tui.app import UhApp
from uh_tui.screens.confirm import ConfirmScreen
from uh_tui.screens.help import HelpScreen
from uh_tui.screens.mission import MissionScreen
from uh_tui.screens.picker import PickerScreen
from uh_tui.screens.review import ReviewScreen
from uh_tui.screens.runtime import RuntimeScreen
from uh_tui.widgets.status_line import StatusLine


def run(app: UhApp, scenario: Callable) -> None:  # type: ignore[type-arg]
    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await scenario(pilot)

    asyncio.run(main())


def cell(app: UhApp, table: str, row: str, column: int) -> str:
    return str(app.screen.query_one(table).get_row(row)[column])


def test_v_verifies_the_selected_mission(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="divide")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        assert "FAILED" in cell(app, "#missions", "divide", 2)
        await pilot.press("v")
        await until(
            pilot, lambda: "PASSED" in cell(app, "#missions", "divide", 2), what="new verdict"
        )
        assert launcher.argvs == [
            ["uh-core", "verify", "divide", "--root", str(launcher.layout.root)]
        ]
        # the criteria table follows the new run, from its events
        assert cell(app, "#criteria", "unit-tests", 2) == "passed"
        assert cell(app, "#criteria", "divide-works", 2) == "pending"

    run(app, scenario)


def test_r_picks_a_runtime_and_runs_on_it(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="add-subtract")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        options = app.screen.query_one("#picker-options")
        ids = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert ids == ["aider", "claude", "codex", "hermes", "oh-my-pi", "pi"]
        await pilot.press("down", "enter")  # claude
        await until(
            pilot, lambda: "run claude" in cell(app, "#missions", "add-subtract", 4), what="live"
        )
        assert launcher.argvs == [
            [
                "uh-core",
                "mission",
                "run",
                "add-subtract",
                "--runtime",
                "claude",
                "--root",
                str(launcher.layout.root),
            ]
        ]
        await pilot.press("2")
        await until(pilot, lambda: "running" in cell(app, "#comparison", "claude", 1))

    run(app, scenario)


def test_r_then_escape_launches_nothing(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="divide")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        await pilot.press("escape")
        await pilot.pause(0.2)
        assert launcher.launches == [] and not isinstance(app.screen, PickerScreen)

    run(app, scenario)


def test_a_runs_every_runtime(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="divide")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("a")
        await until(pilot, lambda: "run 3 runtimes" in cell(app, "#missions", "divide", 4))
        assert launcher.argvs == [
            ["uh-core", "mission", "run-all", "divide", "--root", str(launcher.layout.root)]
        ]

    run(app, scenario)


def test_h_starts_a_harness_run(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("3")
        assert cell(app, "#harness", "add-subtract", 6).count("●") == 1
        await pilot.press("h")
        await until(pilot, lambda: cell(app, "#harness", "add-subtract", 6).count("●") == 2)
        assert launcher.argvs == [
            ["uh-core", "harness", "run", "--root", str(launcher.layout.root)]
        ]
        assert app.screen.query_one("#harness-runs").row_count == 4

    run(app, scenario)


def test_c_cancels_what_the_mission_runs(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="divide")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        assert "run epsilon" in cell(app, "#missions", "divide", 4)
        await pilot.press("c")
        await until(pilot, lambda: cell(app, "#missions", "divide", 4) == "")
        assert launcher.argvs == [
            ["uh-core", "mission", "cancel", "divide", "--root", str(launcher.layout.root)]
        ]
        await pilot.press("2")
        assert cell(app, "#comparison", "epsilon", 1) == "cancelled"

    run(app, scenario)


HARNESS_RUN = "harness-20260115T115800Z-0000hh"  # the fixture's run in progress (changelog)


def test_c_cancels_the_harness_run_of_the_selected_mission(
    make_app, launcher: FakeLauncher
) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="changelog")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        assert app.snapshot.harness.running == HARNESS_RUN
        await pilot.press("c")
        await until(pilot, lambda: app.snapshot.harness.running is None, what="run over")
        assert launcher.argvs == [
            ["uh-core", "harness", "cancel", HARNESS_RUN, "--root", str(launcher.layout.root)]
        ]
        mission = app.snapshot.mission("changelog")
        assert mission is not None and mission.harness is not None
        assert mission.harness.status != "running"
        await until(pilot, lambda: "cancel harness run" in app.status_text.plain)

    run(app, scenario)


def test_c_on_a_running_harness_row_cancels_its_run(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("3")
        assert "running" in cell(app, "#harness", "changelog", 1)
        await pilot.press("c")  # add-subtract: its last run is over, nothing of it runs
        await until(pilot, lambda: launcher.launches)
        assert launcher.argvs[0][:3] == ["uh-core", "mission", "cancel"]
        await pilot.press("down", "c")  # changelog: running in the harness
        await until(pilot, lambda: len(launcher.launches) == 2)
        assert launcher.argvs[1] == [
            "uh-core",
            "harness",
            "cancel",
            HARNESS_RUN,
            "--root",
            str(launcher.layout.root),
        ]
        await until(pilot, lambda: "running" not in cell(app, "#harness", "changelog", 1))

    run(app, scenario)


def test_d_discards_a_sandbox_after_confirming(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    target = "sbx-divide-alpha-20260115115000"

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("4", "d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")  # keep it: nothing launched
        await pilot.pause(0.1)
        assert launcher.launches == []
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        table = app.screen.query_one("#sandboxes")
        await until(pilot, lambda: table.row_count == 5, what="row gone")
        assert launcher.argvs == [
            ["uh-core", "sandbox", "discard", target, "--root", str(launcher.layout.root)]
        ]
        assert target not in [row.key.value for row in table.rows.values()]

    run(app, scenario)


def test_d_in_the_missions_view_picks_among_its_sandboxes(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="changelog")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("d")
        await until(pilot, lambda: isinstance(app.screen, PickerScreen))
        assert app.screen.query_one("#picker-options").option_count == 1
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await until(pilot, lambda: launcher.launches)
        assert launcher.argvs[0][3] == "sbx-changelog-agent-20260115115800"

    run(app, scenario)


@pytest.mark.usefixtures("reviewed")
def test_ctrl_x_discards_in_a_review_while_typing_a_name(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="divide")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("2", "p")  # alpha's sandbox
        await until(pilot, lambda: isinstance(app.screen, ReviewScreen))
        name = app.screen.query_one("#review-approver")
        assert app.focused is name
        await pilot.press(*"max")  # an x in a name is a letter
        assert name.value == "max" and not isinstance(app.screen, ConfirmScreen)
        await pilot.press("ctrl+x")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="confirm")
        await pilot.press("y")
        await until(pilot, lambda: launcher.launches)
        assert launcher.argvs == [
            [
                "uh-core",
                "sandbox",
                "discard",
                "sbx-divide-alpha-20260115115000",
                "--root",
                str(launcher.layout.root),
            ]
        ]

    run(app, scenario)


def test_enter_drills_into_a_mission_and_a_runtime(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="divide")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
        assert app.screen.query_one("#mission-criteria").row_count == 3
        await pilot.press("escape")
        await pilot.press("2", "enter")  # alpha
        await until(pilot, lambda: isinstance(app.screen, RuntimeScreen))
        files = app.screen.query_one("#runtime-files")
        await until(pilot, lambda: files.row_count == 4, what="diff stats")
        assert str(files.get_row("src/calc/core.py")[1]) == "+7"
        await pilot.press("escape")
        assert app.screen is app.dashboard()

    run(app, scenario)


def test_slash_filters_and_escape_clears(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        table = app.screen.query_one("#missions")
        assert table.row_count == 5
        await pilot.press("slash", "c", "h", "a", "n")
        assert table.row_count == 1
        await pilot.press("enter")  # keeps the filter, back to the table
        assert table.row_count == 1 and app.focused is table
        await pilot.press("escape")
        assert table.row_count == 5

    run(app, scenario)


def test_tab_cycles_the_panes(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        seen = [app.focused.id]
        for _ in range(4):
            await pilot.press("tab")
            seen.append(app.focused.id)
        assert seen == ["missions", "criteria", "criterion-detail", "events", "missions"]
        await pilot.press("3", "tab")
        assert app.focused.id == "harness-detail"  # the selected mission's reason and rounds
        await pilot.press("tab")
        assert app.focused.id == "harness-runs"

    run(app, scenario)


def test_question_mark_shows_every_binding_id(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        ids = {str(row[2]) for row in app.screen.rows}
        assert {
            "mission.verify",
            "mission.run",
            "mission.run_all",
            "harness.run",
            "mission.cancel",
            "sandbox.discard",
            "app.drill",
            "app.filter",
            "app.cycle_panes",
            "app.help",
            "app.quit",
        } <= ids
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

    run(app, scenario)


def test_q_quits(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("q")

    run(app, scenario)
    assert not app.is_running and app.return_value is None


def test_a_failed_launch_shows_its_error_in_place(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    launcher.fail["verify"] = "uh-core: error: unknown mission 'divide'"
    app = make_app(mission="divide")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("v")
        await until(pilot, lambda: app.launch_errors)
        assert "launch failed" in cell(app, "#missions", "divide", 5)
        line = app.screen.query_one(StatusLine)
        assert "unknown mission" in line.message.plain and "exit 2" in line.message.plain
        del launcher.fail["verify"]
        await pilot.press("v")  # a later launch that works clears the badge
        await until(pilot, lambda: "launch failed" not in cell(app, "#missions", "divide", 5))

    run(app, scenario)


def test_keys_can_be_remapped_by_binding_id(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="divide", keymap={"mission.verify": "ctrl+v"})

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("v")
        await pilot.pause(0.2)
        assert launcher.launches == []
        await pilot.press("ctrl+v")
        await until(pilot, lambda: launcher.launches)
        assert launcher.argvs[0][:3] == ["uh-core", "verify", "divide"]

    run(app, scenario)


def test_keymap_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from uh_tui.keymap import load_keymap

    keymap_file = tmp_path / "keymap.yaml"
    keymap_file.write_text("mission.verify: V\napp.quit: ctrl+q\n")
    env = {"UH_KEYMAP_FILE": str(keymap_file), "UH_KEYMAP": "app.quit=x, nonsense"}
    keymap, problems = load_keymap(env)
    assert keymap == {"mission.verify": "V", "app.quit": "x"}
    assert problems == ["UH_KEYMAP: 'nonsense' is not id=key"]


def test_a_misspelled_keymap_id_is_reported(make_app, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("UH_KEYMAP", "mission.verfy=V")
    app = make_app()

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        assert app.warning == (
            "keymap: unknown binding id 'mission.verfy' — did you mean mission.verify?"
        )
        await pilot.pause()
        assert (
            "unknown binding id 'mission.verfy'" in app.screen.query_one(StatusLine).render().plain
        )

    run(app, scenario)


def test_the_command_palette_runs_the_same_actions(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="divide")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        for char in "verify div":
            await pilot.press("space" if char == " " else char)
        await pilot.pause(0.5)
        await pilot.press("enter")
        await until(pilot, lambda: launcher.launches, what="palette launch")
        assert launcher.argvs == [
            ["uh-core", "verify", "divide", "--root", str(launcher.layout.root)]
        ]

    run(app, scenario)


def test_mission_keys_work_on_the_mission_screen(make_app, launcher: FakeLauncher) -> None:  # type: ignore[no-untyped-def]
    app = make_app(mission="add-subtract")

    async def scenario(pilot) -> None:  # type: ignore[no-untyped-def]
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, MissionScreen))
        await pilot.press("v")
        await until(pilot, lambda: launcher.launches)
        assert launcher.argvs == [
            ["uh-core", "verify", "add-subtract", "--root", str(launcher.layout.root)]
        ]
        events = app.screen.query_one("#mission-events")
        await until(
            pilot,
            lambda: any(
                line.event == "verification.finished" and line.timestamp.startswith("2026-01-15T12")
                for line in events.lines_seen
            ),
        )

    run(app, scenario)
