"""Provider limits are an outcome, not a failure (docs/harness.md "Provider limits"): a
rate-limited attempt is not charged; the mission is parked until the limit lifts, or handed
to the next of ``fallback_runtimes``; a limit that outlasts the run ends it ``rate_limited``.

The scripted agents say what the CLIs say: an HTTP 429 line on stderr, and exit 1."""

from __future__ import annotations

import json
import subprocess
import time

from tests.harness.conftest import Project, write_config
from tests.runtime.helpers import add_manifest

LIMITED = (
    "if n == 1:\n"
    "    sys.stderr.write('Error: 429 Too Many Requests (retry after 1s)\\n')\n"
    "    sys.exit(1)\n"
    "write('src/calc.py', GOOD)\n"
)


def test_a_limited_attempt_is_parked_not_charged_and_the_mission_resumes(
    project: Project,
) -> None:
    agent = project.agent("limited", LIMITED)
    started = time.monotonic()
    result, data = project.run_json("--agent", agent, "--max-attempts", "1")
    assert result.code == 0, result.stderr  # one attempt allowed: the limited one is free
    assert time.monotonic() - started >= 1.0  # it waited for the limit to lift
    [record] = data["requirements"]
    assert record["outcome"] == "pass"
    first, second = record["attempts"]
    assert first["outcome"] == "rate_limited" and first["retry_after_s"] == 1.0
    assert first["verdict"].startswith("rate limited: Error: 429 Too Many Requests")
    assert first["verdict"].endswith("(not charged)")
    assert first["agent"]["rate_limited"] is True
    assert second["outcome"] == "pass"
    [parked] = record["parked"]
    assert parked["attempt"] == 1 and parked["runtime"] == "agent"
    assert 0 < parked["wait_s"] <= 1.0
    events = project.events(".harness/missions/calc/events.ndjson")
    [event] = [e for e in events if e["event"] == "harness.mission.parked"]
    assert event["until"] == parked["until"] and event["runtime"] == "agent"
    finished = [e for e in events if e["event"] == "runtime.finished"]
    assert finished[0]["status"] == "rate_limited" and finished[0]["retry_after_s"] == 1.0
    text = project.run("--agent", agent, "--force", "--max-attempts", "1").stdout
    assert "[PASS] calc" in text  # the counter file says attempt 3: no limit this time


def test_a_limited_runtime_hands_the_mission_to_its_fallback(project: Project) -> None:
    add_manifest(
        project.repo,
        "limited",
        "runtime_kind: script\nconfig:\n  script: |\n"
        "    echo 'rate_limit_error: usage limit reached, resets at 2099-01-01T00:00:00Z' >&2\n"
        "    exit 1\n",
    )
    add_manifest(
        project.repo,
        "backup",
        "runtime_kind: script\nconfig:\n  script: |\n"
        "    printf 'def add(a, b):\\n    return a + b\\n' > src/calc.py\n",
    )
    write_config(project.repo, "fallback_runtimes: [backup]\n")
    project.repo.commit("runtimes")
    started = time.monotonic()
    result, data = project.run_json("--runtime", "limited")
    assert result.code == 0, result.stderr
    assert time.monotonic() - started < 60  # no wait for a reset in 2099: backup took over
    [record] = data["requirements"]
    first, second = record["attempts"]
    assert (first["outcome"], first["agent"]["runtime"]) == ("rate_limited", "limited")
    assert first["retry_after_s"] > 3600  # the reset it said, capped
    assert (second["outcome"], second["agent"]["runtime"]) == ("pass", "backup")
    [fallback] = record["fallbacks"]
    assert fallback.startswith("limited → backup: rate limited: rate_limit_error: usage limit")
    assert record["parked"] == []
    events = project.events(".harness/missions/calc/events.ndjson")
    [event] = [e for e in events if e["event"] == "harness.mission.fallback"]
    assert (event["runtime"], event["to"]) == ("limited", "backup")
    assert "fallback: limited → backup" in project.run("--runtime", "limited", "--force").stdout


def test_a_limit_past_the_time_budget_ends_the_mission_rate_limited(project: Project) -> None:
    agent = project.agent(
        "always",
        "sys.stderr.write('HTTP 429: rate limited; Retry-After: 3600\\n')\nsys.exit(1)\n",
    )
    started = time.monotonic()
    result, data = project.run_json("--agent", agent, "--budget-seconds", "120")
    assert time.monotonic() - started < 60  # it did not wait an hour
    assert result.code == 1
    [record] = data["requirements"]
    assert record["outcome"] == "rate_limited"
    assert "after the run's budget_seconds" in record["reason"]
    assert [a["outcome"] for a in record["attempts"]] == ["rate_limited"]
    assert data["totals"]["rate_limited"] == 1 and data["totals"]["judged"] == 0


def test_a_traceback_line_429_is_a_failure_not_a_limit(project: Project) -> None:
    agent = project.agent(
        "crash",
        "sys.stderr.write('  File \"agent.py\", line 429, in main\\nValueError: no\\n')\n"
        "sys.exit(1)\n",
    )
    result, data = project.run_json("--agent", agent)
    assert result.code == 1
    [attempt] = data["requirements"][0]["attempts"]
    assert attempt["outcome"] == "fail" and attempt["stage"] == "agent"
    assert data["requirements"][0]["parked"] == []


def test_cancel_ends_a_parked_wait_and_resume_charges_nothing_for_it(project: Project) -> None:
    agent = project.agent(
        "limited",
        "if n == 1:\n"
        "    sys.stderr.write('HTTP 429 Too Many Requests; Retry-After: 600\\n')\n"
        "    sys.exit(1)\n"
        "write('src/calc.py', GOOD)\n",
    )
    run = project.repo.start(
        "harness", "run", "--agent", agent, "--max-attempts", "1", "--json",
        stderr=subprocess.PIPE,
    )  # fmt: skip
    log = project.root / ".harness/missions/calc/events.ndjson"
    deadline = time.monotonic() + 60
    while not (log.exists() and "harness.mission.parked" in log.read_text()):
        assert run.poll() is None and time.monotonic() < deadline, "never parked"
        time.sleep(0.05)
    started = time.monotonic()
    cancel = project.repo.uh("harness", "cancel")
    assert cancel.code == 0, cancel.stderr
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    assert time.monotonic() - started < 30  # the 600 s wait ended at once
    assert json.loads(out)["status"] == "interrupted"
    # resumed: the limited attempt was never charged, so the one allowed attempt remains
    result, data = project.run_json("--agent", agent, "--max-attempts", "1", "--resume")
    assert result.code == 0, result.stderr
    [record] = data["requirements"]
    assert record["outcome"] == "pass"
    assert record["resumed"]["charged_attempts"] == 0
    assert record["resumed"]["last_attempt_begun"] == 1


def test_an_agent_that_always_claims_a_limit_gets_no_free_rounds(project: Project) -> None:
    # hostile: "rate limited, retry at once", forever, to escape --max-attempts
    agent = project.agent(
        "claimer",
        "sys.stderr.write('HTTP 429 Too Many Requests; Retry-After: 0\\n')\nsys.exit(1)\n",
    )
    result, data = project.run_json("--agent", agent, "--max-attempts", "1")
    assert result.code == 1
    [record] = data["requirements"]
    assert record["outcome"] == "rate_limited" and record["commit"] is None
    assert record["reason"].startswith("rate limited 9 times on agent")
    assert len(record["attempts"]) == 9 and len(record["parked"]) == 8  # MAX_PARKS, then ends
