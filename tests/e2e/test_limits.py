"""Each real CLI refused by its provider's limit (HTTP 429) ends ``rate_limited``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import Agent
from tests.e2e.test_mission_run import records, run


def finished_event(agent: Agent) -> dict[str, Any]:
    log = agent.repo.root / ".harness/missions/m/events.ndjson"
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [e for e in events if e.get("event") == "runtime.finished"][-1]


@pytest.mark.parametrize("mode", ["ratelimit", "usagelimit"])
def test_a_provider_limit_is_rate_limited(agent: Agent, mode: str) -> None:
    agent.server.script.mode = mode  # type: ignore[assignment]
    started = time.monotonic()
    code, data, stderr = run(agent)
    took = time.monotonic() - started
    folder = records(agent.repo, data)
    session = yaml.safe_load((folder / "runtime-session.yaml").read_text())
    agent_dir = folder.parent.parent / "agent"
    out = (agent_dir / "runtime.stdout.log").read_text(errors="replace")
    err = (agent_dir / "runtime.stderr.log").read_text(errors="replace")
    dump = Path("/tmp/probe") / f"{agent.runtime}-{mode}.txt"
    dump.write_text(
        f"took {took:.1f}s calls {len(agent.server.model_calls())}\n"
        f"data {json.dumps(data)}\nsession {json.dumps(session)}\n"
        f"finished {json.dumps(finished_event(agent))}\n"
        f"--- stdout\n{out[-6000:]}\n--- stderr\n{err[-6000:]}\n"
    )
    assert data["status"] == "rate_limited", data
