"""Messages are never lost: the status line shows the start of one (one line, marked when
cut) and the message log (``m``) shows every message in full, wrapped, with each launched
command's whole output."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tests.tui.conftest import SIZE, settle, until
from tests.tui.fake_launcher import FakeLauncher
from uh_tui.app import UhApp
from uh_tui.screens.help import HelpScreen
from uh_tui.screens.messages import MessagesScreen
from uh_tui.widgets.status_line import StatusLine

NO_AGENT = (
    'uh-core: error: no agent to run (fix: pass --agent "cmd {prompt_file}" or --runtime R, '
    "or set agent: or runtime: in .harness/harness.config.yaml and commit it — the harness "
    "refuses a dirty tree)"
)
VERIFIED = (
    "[FAIL] divide\nacceptance: 1 passed, 2 block-failed\n"
    "result: .harness/missions/divide/verification.yaml\n"
)


def _log_text(app: UhApp) -> list[str]:
    screen = app.screen
    assert isinstance(screen, MessagesScreen)
    return [strip.text.rstrip() for strip in screen.query_one("#messages-log").lines]


def test_a_long_message_is_one_line_and_whole_in_the_log(
    make_app: Callable[..., UhApp], launcher: FakeLauncher
) -> None:
    launcher.fail["harness"] = NO_AGENT
    launcher.stdout["verify"] = VERIFIED
    app = make_app(mission="divide")

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("h")
            await until(pilot, lambda: app.launch_errors, what="the refusal")
            await pilot.pause()
            line = app.screen.query_one(StatusLine)
            shown = line.render().plain
            assert "\n" not in shown and len(shown) <= line.content_size.width
            assert shown.startswith("✗ harness: uh-core: error: no agent to run")
            assert shown.endswith("m: messages")
            await pilot.press("v")
            await until(pilot, lambda: len(app.results) == 2, what="verify")

            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, MessagesScreen), what="the log")
            await pilot.pause()
            lines = _log_text(app)
            text = " ".join(" ".join(lines).split())
            # the whole fix hint, wrapped within the screen's width
            assert (
                "in .harness/harness.config.yaml and commit it — the harness refuses a dirty tree)"
                in text
            )
            assert all(len(row) <= 80 for row in lines)
            assert sum("no agent to run" in row for row in lines) >= 1
            # the launched commands, their exits and their full output
            flat = "".join(text.split())
            assert f"$uh-coreharnessrun--root{app.root}(exit2)" in flat
            assert f"$uh-coreverifydivide--root{app.root}(exit0)" in flat
            assert "result: .harness/missions/divide/verification.yaml" in text
            assert "acceptance: 1 passed, 2 block-failed" in text
            await pilot.press("escape")
            assert not isinstance(app.screen, MessagesScreen)

    asyncio.run(main())


def test_the_log_is_in_help_and_the_palette(make_app: Callable[..., UhApp]) -> None:
    app = make_app()

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("question_mark")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen))
            assert ("m", "Messages", "app.messages") in app.screen.rows
            await pilot.press("escape", "ctrl+p")
            await pilot.pause(0.2)
            for char in "messages":
                await pilot.press(char)
            await pilot.pause(0.5)
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, MessagesScreen), what="the log")

    asyncio.run(main())


def test_the_launcher_keeps_a_commands_whole_output() -> None:
    from uh_tui.launch import Launch, Launcher

    script = "for i in $(seq 1 3000); do echo out $i; done; echo err >&2; echo last; exit 1"
    result = Launcher().launch(Launch("verify", "x", ("sh", "-c", script)))
    assert result.returncode == 1 and result.ok
    assert result.stdout.startswith("out 1\nout 2\n") and result.stdout.endswith("last\n")
    assert result.stdout.count("\n") == 3001 and result.stderr == "err\n"
    assert result.message == "last"
    refused = Launcher().launch(Launch("verify", "x", ("sh", "-c", "echo why >&2; exit 2")))
    assert refused.error == "why (exit 2)" and refused.stderr == "why\n"
