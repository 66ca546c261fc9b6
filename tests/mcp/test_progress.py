"""A verify of many criteria streams: one progress notification per criterion, in order,
each counted against the same total, while it runs."""

from __future__ import annotations

from pathlib import Path

import anyio
import yaml

from tests.mcp.conftest import stdio

CRITERIA = 40


def test_one_notification_per_criterion(demo: Path) -> None:
    mission = {
        "schema_version": "uh.mission.v0",
        "id": "many",
        "title": f"{CRITERIA} trivial criteria",
        "acceptance_criteria": [
            {"id": f"ac-{n:03d}", "description": "trivial", "check_command": "true"}
            for n in range(CRITERIA)
        ],
    }
    path = demo / ".harness/missions/many/mission.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(mission, sort_keys=False))

    async def scenario() -> None:
        async with stdio(demo) as client:
            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(done: float, total: float | None, message: str | None) -> None:
                seen.append((done, total, message))

            result = await client.call_tool(
                "verify_mission", {"mission_id": "many"}, progress_callback=on_progress
            )
            assert not result.is_error, result.content
            assert result.structured_content["status"] == "passed"  # type: ignore[index]
            assert [done for done, _, _ in seen] == list(range(CRITERIA + 1))
            assert {total for _, total, _ in seen} == {CRITERIA}
            assert [m for _, _, m in seen[1:]] == [f"ac-{n:03d}: passed" for n in range(CRITERIA)]

    anyio.run(scenario)
