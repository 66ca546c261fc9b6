"""``harness report``: where attempts end, exhausted missions, pass rate, cost, marks."""

from __future__ import annotations

import json

from tests.conftest import Repo, git
from tests.harness.conftest import Project, write_config
from uh_core.harness.ledger import write_ledger
from uh_core.harness.report import build_report, render_report
from uh_core.layout import Layout
from uh_core.models.ledger import AttemptRecord, HarnessLedger, RequirementRecord

# what the priced agent's CLI would report: 50k tokens in (half of them cache reads), 10k out
USAGE = (
    'print(\'uh-usage: {"model": "m1", "input_tokens": 50000, "output_tokens": 10000, '
    '"cache_read_tokens": 25000}\')\n'
)


def _ledger(run_id: str, hints: list[float | None], outcome: str = "pass") -> HarnessLedger:
    attempts = [
        AttemptRecord(
            attempt=n,
            started_at="2026-01-01T00:00:00.000Z",
            outcome="pass" if n == len(hints) and outcome == "pass" else "fail",
            stage=None if n == len(hints) and outcome == "pass" else "tests",
            profile="priced" if hint is not None else None,
            cost_per_run_hint=hint,
        )
        for n, hint in enumerate(hints, start=1)
    ]
    return HarnessLedger(
        run_id=run_id,
        started_at=f"2026-01-0{run_id[-1]}T00:00:00.000Z",
        root="/r",
        requirements=[
            RequirementRecord(
                mission_id="m",
                branch="harness/m",
                outcome=outcome,  # type: ignore[arg-type]
                attempts=attempts,
            )
        ],
    )


def test_declared_cost_complete_only_when_every_attempt_has_a_hint(repo: Repo) -> None:
    layout = Layout(repo.root)
    write_ledger(layout, _ledger("harness-1", [0.5, 0.5]))
    cost = build_report(layout)["cost"]["declared"]
    assert cost["total"] == 1.0 and cost["complete"] is True
    assert cost["attempts_with_hint"] == 2 and cost["attempts_without_hint"] == 0
    assert "total 1 over 2 attempt(s)" in render_report(build_report(layout))
    write_ledger(layout, _ledger("harness-2", [None, 0.5]))
    data = build_report(layout)
    cost = data["cost"]["declared"]
    assert cost["total"] == 1.5 and cost["complete"] is False
    assert cost["attempts_without_hint"] == 1
    assert cost["by_profile"]["(default)"] == {
        "attempts": 1, "cost_per_run_hint": None, "declared": None,
    }  # fmt: skip
    text = render_report(data)
    assert "at least 1.5 over 3 attempt(s); 1 attempt(s) of profiles without a hint" in text
    assert "the total is incomplete" in text


def test_a_skip_never_replaces_a_missions_latest_outcome(repo: Repo) -> None:
    """A second run that finds ``harness/m`` already there skips m: its green, awaiting review,
    is still m's latest outcome (it read SKIPPED); its history keeps both."""
    layout = Layout(repo.root)
    write_ledger(layout, _ledger("harness-1", [None]))
    write_ledger(layout, _ledger("harness-2", [], outcome="skipped"))
    harness = json.loads(repo.uh("status", "--json").stdout)["harness"]
    [latest] = harness["requirements"]
    assert (latest["run_id"], latest["outcome"]) == ("harness-1", "pass"), latest
    assert latest["history"] == ["pass", "skipped"]
    only = Repo(repo.root.parent / "only")  # skipped in every run: the skip is its latest
    only.root.mkdir()
    write_ledger(Layout(only.root), _ledger("harness-3", [], outcome="skipped"))
    [skipped] = json.loads(only.uh("status", "--json").stdout)["harness"]["requirements"]
    assert skipped["outcome"] == "skipped"


def test_report_sections_marks_and_the_tree_stays_clean(project: Project) -> None:
    write_config(
        project.repo,
        "profiles:\n  - name: priced\n    agent: "
        + project.agent("good", USAGE + 'write("src/calc.py", GOOD)\n')
        + "\n    cost_per_run_hint: 0.5\n"
        + "pricing:\n  m1: {input: 2, output: 10}\n",
    )
    project.repo.commit("profile")
    before = project.snapshot()
    bad = project.agent("bad", 'write("src/calc.py", BAD)\n')
    first, failed_run = project.run_json("--agent", bad, "--max-attempts", "2")
    assert first.code == 1
    second, passed = project.run_json("--profile", "priced", "--force")
    assert second.code == 0, second.stderr
    assert passed["usage"]["run"]["cost_usd"] == 0.2  # 25k×2 + 25k×2 (cache: input price) + 10k×10
    result = project.repo.uh("harness", "report", "--format", "json")
    assert result.code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["runs"] == 2 and data["attempts"] == 3
    assert data["attempt_ends"] == {"verify": 2, "pass": 1}
    [exhausted] = data["exhausted"]
    assert exhausted["mission_id"] == "calc" and exhausted["run_id"] == failed_run["run_id"]
    assert exhausted["attempts"] == 2 and exhausted["failing_stage"] == "verify"
    assert [r["pass_rate"] for r in data["pass_rate"]] == [0.0, 1.0]
    declared = data["cost"]["declared"]
    assert declared["total"] == 0.5 and declared["complete"] is False
    assert declared["attempts_without_hint"] == 2
    measured = data["cost"]["measured"]
    assert (measured["input_tokens"], measured["output_tokens"], measured["reports"]) == (
        50_000, 10_000, 1,
    )  # fmt: skip
    # the bad agent reported nothing: its cost is unknown, never 0; the good one's is priced
    assert measured["by_runtime"]["agent"]["cost_usd"] is None
    assert measured["by_runtime"]["agent"]["cost_unknown"] == ["the agent reported no token usage"]
    priced = measured["by_runtime"]["agent (profile priced)"]
    assert priced["cost_usd"] == 0.2 and priced["passed_missions"] == 1
    assert priced["cost_per_passed_mission"] == 0.2
    assert priced["tokens_per_passed_mission"] == 60_000
    assert measured["cheapest"] == "agent (profile priced)"
    # A mark without a reason is refused; with one, it is one JSON line and applies to calc.
    refused = project.repo.uh("harness", "report", "--mark-false-failure", "calc")
    assert refused.code == 2 and "--reason" in refused.stderr
    typo = project.repo.uh("harness", "report", "--mark-false-failure", "clac", "--reason", "x")
    assert typo.code == 2 and "no such mission" in typo.stderr
    assert not (project.root / ".harness/false-failures.jsonl").exists()
    marked = project.repo.uh(
        "harness", "report", "--mark-false-failure", "calc", "--reason", "flaky CI box"
    )
    assert marked.code == 0, marked.stderr
    [line] = (project.root / ".harness/false-failures.jsonl").read_text().splitlines()
    mark = json.loads(line)
    assert mark["mission_id"] == "calc" and mark["reason"] == "flaky CI box"
    assert mark["failed_runs"] == [failed_run["run_id"]]
    text = project.repo.uh("harness", "report")
    assert text.code == 0
    for heading in (
        "Where attempts end (per attempt):",
        "Missions that spent every attempt and delivered nothing:",
        "Pass rate per run",
        "Cost, declared (attempts × cost_per_run_hint):",
        "Cost, measured (the tokens agents reported, priced at pricing:):",
        "  cheapest per passed mission: agent (profile priced)",
        "False failures: 1 of 1 failure(s) are of missions marked false",
    ):
        assert heading in text.stdout, heading
    assert "░" * 20 in text.stdout and "█" * 20 in text.stdout
    assert "[marked false failure]" in text.stdout
    assert (
        "  agent (profile priced): 1 attempt(s), 50000 input (25000 cache read) + 10000 output "
        "tokens, $0.2000; $0.2000 and 60000 tokens per passed mission (1)"
    ) in text.stdout
    assert "  agent: 2 attempt(s), 0 input (0 cache read) + 0 output tokens, cost unknown: " in (
        text.stdout
    )
    # Ledgers, prompts, marks and reports: none of it shows in the main checkout.
    assert project.snapshot() == before


def test_nothing_generated_lands_on_the_branch_or_in_the_main_tree(project: Project) -> None:
    before = project.snapshot()
    agent = project.agent("good", 'write("src/calc.py", GOOD)\n')
    result, data = project.run_json("--agent", agent)
    assert result.code == 0, result.stderr
    assert project.repo.uh("harness", "report").code == 0
    assert project.repo.uh("harness", "plan").code == 0
    marked = project.repo.uh("harness", "report", "--mark-false-failure", "calc", "--reason", "x")
    assert marked.code == 0
    # Generated files exist (ledger, prompt archive, marks, test report in the worktree)…
    assert (project.root / data["ledger"]).is_file()
    assert list((project.root / ".harness/prompts").glob("calc-*.md"))
    assert (project.root / ".harness/false-failures.jsonl").is_file()
    records = project.root / ".harness/sandboxes" / data["requirements"][0]["sandbox_id"]
    assert list(records.glob("missions/calc/runs/*/attempt-1/junit.xml"))
    # …and none of them is in the main tree's status or on the branch.
    assert project.snapshot() == before
    on_branch = git(project.root, "ls-tree", "-r", "--name-only", "harness/calc").split()
    generated = ("runs/", "prompts/", "false-failures", "audit/", "junit", "events.ndjson",
                 "reports/", "sandboxes/", "diff.patch", "verification.yaml")  # fmt: skip
    assert [p for p in on_branch if any(g in p for g in generated)] == []


def test_a_tree_that_would_show_generated_files_is_refused(project: Project) -> None:
    gitignore = project.root / ".harness/.gitignore"
    gitignore.write_text(gitignore.read_text().replace("/runs/\n", "").replace("/prompts/\n", ""))
    project.repo.commit("weaker ignore")
    before = project.snapshot()
    agent = project.agent("good", 'write("src/calc.py", GOOD)\n')
    refused = project.run("--agent", agent)
    assert refused.code == 2
    assert ".harness/runs/harness-x.json" in refused.stderr and "uh-core init" in refused.stderr
    assert project.snapshot() == before
    assert not (project.root / ".harness/runs").exists()
    assert "harness/calc" not in git(project.root, "branch", "--list")
