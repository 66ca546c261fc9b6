"""The ``r`` picker marks each runtime as ``adapter list`` does: ready here, or missing and
why (read through uh_core.adapters.here)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.tui.conftest import SIZE, settle, until
from uh_tui.app import UhApp
from uh_tui.screens.picker import MISSING, READY, PickerScreen


def test_r_picker_marks_what_can_run_here(make_app, workspace: Path) -> None:  # type: ignore[no-untyped-def]
    adapters = workspace / ".harness" / "adapters"
    (adapters / "fixer.yaml").write_text(
        "schema_version: uh.adapter.v0\nid: fixer\nruntime_kind: script\n"
        "config:\n  script: 'true'\n"
    )
    (adapters / "ghost.yaml").write_text(
        "schema_version: uh.adapter.v0\nid: ghost\nruntime_kind: codex\n"
        "config:\n  cli_command: no-such-codex-here\n"
    )
    app: UhApp = make_app(mission="divide")

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await until(pilot, lambda: any(r.id == "ghost" for r in app.snapshot.runtimes))
            await pilot.press("r")
            await until(pilot, lambda: isinstance(app.screen, PickerScreen))
            options = app.screen.query_one("#picker-options")
            labels = {
                options.get_option_at_index(i).id: str(options.get_option_at_index(i).prompt)
                for i in range(options.option_count)
            }
            assert READY in labels["fixer"]
            assert MISSING in labels["ghost"] and "no no-such-codex-here on PATH" in labels["ghost"]
            assert not options.get_option_at_index(
                list(labels).index("ghost")
            ).disabled  # missing is a mark, not a lock: the run says what failed

    asyncio.run(main())
