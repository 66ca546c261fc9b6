"""Each real CLI refused by its provider's limit (HTTP 429) through ``uh-core mission run``:
the run ends ``rate_limited``, never ``failed``, with when the limit lifts where the CLI passed
it on; a limit the CLI retries past is no limit at all.

The model server answers every model call with a rate limit (``Retry-After: 3`` and the
provider's own body) or a usage limit ("… resets at <5 s ahead>", no Retry-After). Each CLI's
own retries are turned down where it lets them be (tests/e2e/clis.py). What each prints:

- codex: ``exceeded retry limit, last status: 429 Too Many Requests`` (neither the body nor
  Retry-After), and for a usage limit its own ``You’ve hit your usage limit. Try again at
  5:17 PM.`` (local time, to the minute);
- claude: ``API Error: Request rejected (429) · <Anthropic's message>`` in its result line
  (Anthropic's rate-limit message says no time; the Retry-After header only shows as the
  ``retry_delay_ms`` of its own ``api_retry``, with jitter, so it is not taken);
- pi, omp: ``429 <the body's message>`` as the last message's ``errorMessage`` (omp appends
  ``retry-after-ms=3000`` from the header);
- aider: ``litellm.RateLimitError: … OpenAIException - <the body's message>`` on stdout;
- hermes: ``API call failed after 1 retries: HTTP 429: <the body's message>`` on stdout.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import Agent
from tests.e2e.model_server import Mode
from tests.e2e.test_mission_run import records, run

# CLIs that retry a limit for a long time whatever they are told: run with UH_E2E_SLOW_LIMITS=1
SLOW = {
    "aider": "aider retries a rate limit itself, doubling its wait until it passes 60 s "
    "(aider/models.py RETRY_TIMEOUT, no option changes it): a minute of waiting, 70-120 s in all",
    "omp": "omp's transport tries each model call 6 times honouring Retry-After and its provider "
    "stream retries once more, both hard-coded (@oh-my-pi/pi-ai): 12 calls, 30-45 s",
}
# (CLI, mode) whose output says nothing of when the limit lifts
SILENT = {("codex", "ratelimit"), ("claude", "ratelimit")}
# codex prints the reset to the minute: the end of that minute is taken
CLOCK_S = 60.0


def finished_events(agent: Agent) -> list[dict[str, Any]]:
    log = agent.repo.root / ".harness/missions/m/events.ndjson"
    events = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [event for event in events if event.get("event") == "runtime.finished"]


def skip_slow(agent: Agent) -> None:
    why = SLOW.get(agent.cli.name)
    if why is not None and os.environ.get("UH_E2E_SLOW_LIMITS") != "1":
        pytest.skip(f"{why}; UH_E2E_SLOW_LIMITS=1 runs it")


@pytest.mark.parametrize("mode", ["ratelimit", "usagelimit"])
def test_a_provider_limit_is_rate_limited_not_failed(agent: Agent, mode: Mode) -> None:
    skip_slow(agent)
    script = agent.server.script
    script.mode = mode
    code, data, stderr = run(agent)
    assert (code, data["status"]) == (1, "rate_limited"), (data, stderr)
    assert data["error"].startswith("rate limited: "), data
    assert data["touched_paths"] == []
    assert agent.server.refused >= 1
    session = yaml.safe_load((records(agent.repo, data) / "runtime-session.yaml").read_text())
    assert session["status"] == "rate_limited"
    assert session["blockers"][0].startswith("rate limited: ")
    [finished] = finished_events(agent)
    assert finished["status"] == "rate_limited"
    after = session["retry_after_s"]
    assert finished["retry_after_s"] == after  # the event tells what the session file does
    if (agent.cli.name, mode) in SILENT:
        assert after is None, session
    elif mode == "ratelimit":
        assert after == float(script.retry_after), session
    else:
        slack = CLOCK_S if agent.cli.name == "codex" else 0.0
        assert after is not None and 0.0 <= after <= script.resets_in + slack, session


@pytest.mark.parametrize("agent", ["aider", "claude", "omp", "pi"], indirect=True)
def test_a_limit_the_cli_retries_past_is_no_limit(agent: Agent) -> None:
    # the CLIs that still retry with tests/e2e/clis.py's settings (codex and hermes do not)
    agent.server.script.mode = "ratelimit"
    agent.server.script.limited_calls = 1
    code, data, stderr = run(agent)
    assert (code, data["status"]) == (0, "succeeded"), (data, stderr)
    assert agent.server.refused == 1
    assert data["touched_paths"] == ["a.txt"]
    session = yaml.safe_load((records(agent.repo, data) / "runtime-session.yaml").read_text())
    assert session["retry_after_s"] is None
    assert not any("rate limited" in blocker for blocker in session["blockers"])
