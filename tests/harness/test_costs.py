"""Money (docs/costs.md): every attempt's tokens priced at ``pricing:``, summed per mission,
runtime and run; ``budget_usd`` (a mission's, the run's) keeps attempts from starting that
would pass it; an unknown price is said, never counted as 0.

The scripted agents report their tokens the way any plain agent can: a ``uh-usage:`` line."""

from __future__ import annotations

import json

import pytest

from tests.conftest import git
from tests.harness.conftest import Project, write_config
from uh_core.harness.costs import Spend, budget_stop
from uh_core.models.ledger import AgentRecord, AttemptRecord

PRICING = "pricing:\n  m1: {input: 2, output: 10, cache_read: 0.2}\n"
# 60k in (20k of them cache reads) and 10k out: 40k×2 + 20k×0.2 + 10k×10 = $0.184 per attempt
REPORT = (
    'print(\'uh-usage: {"model": "%s", "input_tokens": 60000, "cache_read_tokens": 20000, '
    '"output_tokens": 10000}\')\n'
)
ATTEMPT_USD = 0.184
# a new red change every round (a repeated change would stop the rounds as no progress)
RED = 'write("src/calc.py", f"def add(a, b):\\n    return a - b - {n}\\n")\n'


def _config(project: Project, extra: str = "") -> None:
    write_config(project.repo, PRICING + extra)
    project.repo.commit("pricing")


def test_a_green_attempt_is_priced_and_summed_everywhere(project: Project) -> None:
    _config(project)
    agent = project.agent("good", REPORT % "m1" + 'write("src/calc.py", GOOD)\n')
    result, data = project.run_json("--agent", agent)
    assert result.code == 0, result.stderr
    [attempt] = data["requirements"][0]["attempts"]
    assert attempt["cost_usd"] == ATTEMPT_USD and attempt["cost_note"] is None
    assert attempt["usage"] == [
        {
            "model": "m1",
            "input_tokens": 60000,
            "output_tokens": 10000,
            "cache_read_tokens": 20000,
            "cache_write_tokens": 0,
            "reported_cost_usd": None,
        }
    ]
    for block in (
        data["usage"]["run"],
        data["usage"]["missions"]["calc"],
        data["usage"]["runtimes"]["agent"],
    ):
        assert (block["input_tokens"], block["output_tokens"]) == (60000, 10000)
        assert block["cost_usd"] == ATTEMPT_USD and block["cost_unknown"] == []
    text = project.run("--agent", agent, "--force").stdout
    assert "tokens: 60000 in (20000 cache read, 0 cache write), 10000 out; cost $0.1840" in text
    # one runtime.usage per model, tied to its attempt, in the mission's log
    usage = [e for e in project.events(".harness/missions/calc/events.ndjson")]
    usage = [e for e in usage if e["event"] == "runtime.usage"]
    assert [(e["model"], e["attempt"], e["cache_read_tokens"]) for e in usage] == [
        ("m1", 1, 20000),
        ("m1", 1, 20000),
    ]
    # status --json (and so MCP and the dashboard) read the same figures from the ledger
    status = json.loads(project.repo.uh("status", "--json").stdout)["harness"]
    latest = status["ledgers"][-1]
    assert (latest["cost_usd"], latest["cost"], latest["input_tokens"]) == (
        ATTEMPT_USD,
        "$0.1840",
        60000,
    )
    [mission] = status["requirements"]
    assert (mission["tokens"], mission["cost"]) == (70000, "$0.1840")


def test_a_mission_budget_stops_the_attempt_that_would_pass_it(project: Project) -> None:
    project.repo.write(
        ".harness/missions/calc/mission.yaml",
        (project.root / ".harness/missions/calc/mission.yaml").read_text() + "budget_usd: 0.5\n",
    )
    _config(project)
    before = project.snapshot()
    agent = project.agent("red", REPORT % "m1" + RED)
    result, data = project.run_json("--agent", agent, "--max-attempts", "5")
    assert result.code == 1
    assert project.snapshot() == before
    [record] = data["requirements"]
    # 2 × 0.184 = 0.368 spent; a third (0.184 expected) would make 0.552 > 0.5
    assert record["outcome"] == "budget_exhausted"
    assert len(record["attempts"]) == 2
    assert record["reason"] == (
        "attempt 3 not started: the mission's budget_usd $0.5: $0.3680 spent in 2 attempt(s), "
        "the next expected to cost $0.1840 (the mean of this mission's attempts) would pass it"
    )
    assert data["totals"]["budget_exhausted"] == 1 and data["totals"]["judged"] == 0
    assert "harness/calc" in git(project.root, "branch", "--list")  # the work is kept
    assert (project.agents / "red.count").read_text() == "2"  # no third agent ran
    text = project.repo.uh("harness", "report").stdout
    assert "agent: 2 attempt(s), 120000 input (40000 cache read) + 20000 output tokens" in text


def test_the_run_budget_spans_missions(project: Project) -> None:
    project.repo.mission(
        "second", "id: second\nacceptance_criteria:\n  - id: made\n    check_command: test -f x\n"
    )
    _config(project)
    agent = project.agent("good", REPORT % "m1" + 'write("src/calc.py", GOOD)\nwrite("x", "")\n')
    result, data = project.run_json("--agent", agent, "--budget-usd", "0.3")
    outcomes = [(r["mission_id"], r["outcome"], len(r["attempts"])) for r in data["requirements"]]
    # calc's one attempt spent 0.184; another at the run's mean would make 0.368 > 0.3
    assert outcomes == [("calc", "pass", 1), ("second", "budget_exhausted", 0)]
    assert (
        "the run's budget_usd $0.3: $0.1840 spent in 1 attempt(s)"
        in (data["requirements"][1]["reason"])
    )
    assert data["settings"]["budget_usd"] == 0.3
    assert result.code == 1
    assert (
        "[BUDGET] second" in project.run("--agent", agent, "--budget-usd", "0.3", "--force").stdout
    )


def test_an_unknown_price_is_said_and_under_a_budget_stops_the_attempts(
    project: Project,
) -> None:
    _config(project)
    agent = project.agent("red", REPORT % "unpriced-model" + RED)
    _, data = project.run_json("--agent", agent, "--max-attempts", "2")
    first = data["requirements"][0]["attempts"][0]
    assert first["cost_usd"] is None
    assert first["cost_note"] == "no price for model unpriced-model"  # why, unprefixed
    assert data["usage"]["run"]["cost_usd"] is None  # never 0
    assert data["usage"]["run"]["cost_unknown"] == ["no price for model unpriced-model"]
    shown = project.run("--agent", agent, "--force", "--max-attempts", "1").stdout
    assert "; cost unknown: no price for model unpriced-model" in shown, shown
    assert "cost cost" not in shown and "unknown: cost unknown" not in shown
    _, data = project.run_json(
        "--agent", agent, "--force", "--budget-usd", "10", "--max-attempts", "5"
    )
    [record] = data["requirements"]
    assert record["outcome"] == "budget_exhausted" and len(record["attempts"]) == 1
    assert (
        "budget_usd 10 cannot be kept: cost unknown: no price for model unpriced-model"
        in (record["reason"])
    )
    assert "pricing: in harness.config.yaml" in record["reason"]


def test_an_agent_that_reports_nothing_has_no_cost_not_a_zero_one(project: Project) -> None:
    _config(project)
    agent = project.agent("good", 'write("src/calc.py", GOOD)\n')
    _, data = project.run_json("--agent", agent)
    [attempt] = data["requirements"][0]["attempts"]
    assert (attempt["usage"], attempt["cost_usd"]) == ([], None)
    assert attempt["cost_note"] == "the agent reported no token usage"
    assert "tokens:" not in project.run("--agent", agent, "--force").stdout  # nothing to show


def test_bad_prices_and_budgets_are_refused_before_anything_runs(project: Project) -> None:
    write_config(project.repo, "pricing:\n  m1: {input: 2, ouptut: 10}\n")
    project.repo.commit("typo")
    agent = project.agent("good", 'write("src/calc.py", GOOD)\n')
    result = project.run("--agent", agent)
    assert result.code == 2
    assert "harness.config.yaml:6:3: pricing.m1.output: required key is missing" in result.stderr
    assert not (project.root / ".harness/runs").exists() or not list(
        (project.root / ".harness/runs").glob("*.json")
    )
    _config(project)
    for bad in ("0", "-1", "nan", "x"):
        refused = project.run("--agent", agent, "--budget-usd", bad)
        assert refused.code == 2, (bad, refused.stderr)
        assert "--budget-usd" in refused.stderr


def _attempt(n: int, usd: float | None, outcome: str = "fail") -> AttemptRecord:
    # as a ledger written before 2026-12-07 has it: the prefix in the note itself
    note = None if usd is not None else "cost unknown: no price for model x"
    return AttemptRecord(
        attempt=n,
        started_at="T",
        outcome=outcome,
        cost_usd=usd,
        cost_note=note,  # type: ignore[arg-type]
        agent=AgentRecord(runtime="agent", command="x"),
    )


def test_the_budget_rule_with_its_figures() -> None:
    mission = Spend.of([_attempt(1, 0.2), _attempt(2, 0.4)])
    assert (mission.usd, mission.attempts, mission.mean) == (
        pytest.approx(0.6),
        2,
        pytest.approx(0.3),
    )
    run = Spend.of([_attempt(1, 0.2), _attempt(2, 0.4), _attempt(1, 1.0)])
    assert budget_stop(mission, run, 1.0, None) is None  # 0.6 + 0.3 = 0.9
    assert budget_stop(mission, run, 0.85, None) is not None
    assert "the run's budget_usd $1.8" in (budget_stop(mission, run, None, 1.8) or "")
    # a mission's first attempt: the run's mean (1.6 / 3) is what it is expected to cost
    assert budget_stop(Spend(), run, 0.5, None) is not None
    assert budget_stop(Spend(), Spend(), 0.01, 0.01) is None  # nothing known yet: it starts


def test_a_refusal_is_free_and_says_nothing_of_the_next_cost() -> None:
    spend = Spend.of([_attempt(1, 0.0, "rate_limited"), _attempt(2, 0.5)])
    assert (spend.usd, spend.attempts, spend.mean) == (0.5, 1, 0.5)


def test_an_unknown_spend_cannot_be_kept_within_a_budget() -> None:
    spend = Spend.of([_attempt(1, None)])
    assert spend.unknown == ["no price for model x"]  # said once, by the reader
    assert "cannot be kept" in (budget_stop(spend, spend, 5.0, None) or "")
    assert budget_stop(spend, spend, None, None) is None  # no budget: nothing to keep
