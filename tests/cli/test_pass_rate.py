"""One pass-rate rule (``uh_core.harness.rate``) for every reader of the ledgers: the run
summary, ``harness report`` (text and JSON), ``status`` (text and JSON) and the dashboard's
header and runs table agree on generated ledgers. Blocked missions count against the rate;
a run that judged nothing has none (``-``)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.conftest import Repo
from uh_core.harness.ledger import list_ledgers, read_ledger, write_ledger
from uh_core.harness.rate import Tally, tally, total
from uh_core.harness.report import build_report, render_report
from uh_core.harness.summary import NOTHING_TO_PROMOTE, exit_code, next_steps, render
from uh_core.layout import Layout
from uh_core.models.ledger import Handover, HarnessLedger, RequirementRecord
from uh_core.workspace.state import LedgerView
from uh_core.workspace.store import Store
from uh_tui.widgets.harness_runs_table import _row
from uh_tui.widgets.pass_rate import label

# run id → its missions' outcomes (the first is the demo's: 1 passed, 2 blocked)
RUNS = {
    "harness-20260101T000000Z-000001": ["pass", "blocked", "blocked"],
    "harness-20260102T000000Z-000002": ["pass", "fail", "skipped", "error"],
    "harness-20260103T000000Z-000003": ["skipped", "skipped"],
}
SHOWN = ["33% 1/3", "50% 1/2", "-"]
RATES = [0.3333, 0.5, None]


def _ledger(run_id: str, outcomes: list[str]) -> HarnessLedger:
    day = run_id.split("-")[1][:8]
    records = []
    for n, outcome in enumerate(outcomes):
        mission = f"m{n}"
        records.append(
            RequirementRecord(
                mission_id=mission,
                branch=f"harness/{mission}",
                outcome=outcome,  # type: ignore[arg-type]
                reason=None if outcome == "pass" else f"{outcome} for a reason",
                handover=Handover(code="no_progress", reason="no_progress: same tree")
                if outcome == "blocked"
                else None,
            )
        )
    return HarnessLedger(
        run_id=run_id,
        status="completed",
        started_at=f"{day[:4]}-{day[4:6]}-{day[6:]}T00:00:00.000Z",
        root="/r",
        requirements=records,
    )


@pytest.fixture
def ledgers(repo: Repo) -> Layout:
    layout = Layout(repo.root)
    for run_id, outcomes in RUNS.items():
        write_ledger(layout, _ledger(run_id, outcomes))
    return layout


def test_the_rule() -> None:
    demo = tally(["pass", "blocked", "blocked"])
    assert (demo.passed, demo.blocked, demo.judged) == (1, 2, 3)
    assert demo.text() == "33% 1/3" and round(demo.rate or 0, 4) == 0.3333
    assert tally(["skipped", "error"]).rate is None and tally([]).text() == "-"
    assert tally(["pass", "fail", "skipped", "error"]).text() == "50% 1/2"
    assert total([demo, tally(["pass"])]).text() == "50% 2/4"
    assert Tally().as_dict()["pass_rate"] is None


def test_every_reader_agrees(repo: Repo, ledgers: Layout) -> None:
    # the run summary, one per ledger
    for path, shown in zip(list_ledgers(ledgers), SHOWN, strict=True):
        text = render(read_ledger(path), "x")
        assert f"; pass rate {shown}; " in text, text
    # harness report, JSON and text
    data = json.loads(repo.uh("harness", "report", "--json").stdout)
    assert [r["pass_rate"] for r in data["pass_rate"]] == RATES
    assert [r["blocked"] for r in data["pass_rate"]] == [2, 0, 0]
    assert [r["judged"] for r in data["pass_rate"]] == [3, 2, 0]
    text = render_report(build_report(ledgers))
    chart = [line for line in text.splitlines() if "░" in line or "·····" in line]
    for line, run_id, shown in zip(chart, RUNS, SHOWN, strict=True):
        assert run_id in line and f" {shown} " in line, line
    # status --json: the same counts and rate per run; status's text names the last run's
    status = json.loads(repo.uh("status", "--json").stdout)
    runs = status["harness"]["ledgers"]
    assert [r["pass_rate"] for r in runs] == RATES
    assert [(r["passed"], r["failed"], r["blocked"], r["skipped"], r["errors"]) for r in runs] == [
        (1, 0, 2, 0, 0),
        (1, 1, 0, 1, 1),
        (0, 0, 0, 2, 0),
    ]
    # the newest run judged nothing: said, with the last run that did (its - hid the result)
    assert (
        repo.uh("status")
        .stdout.splitlines()[-1]
        .endswith("(last: nothing judged; harness-20260102T000000Z-000002: pass rate 50% 1/2)")
    )
    # the dashboard's values: the runs table's rate cells, and the header
    harness = Store(repo.root).settle().harness
    assert [str(_row(run)[1][3]) for run in harness.ledgers] == SHOWN
    assert [str(_row(run)[1][4]) for run in harness.ledgers] == [
        "1 pass 2 blocked",
        "1 pass 1 fail 1 skipped 1 error",
        "2 skipped",
    ]
    assert label(harness) == "pass rate: last run - (nothing judged) · all 3 runs 40% 2/5"


def test_status_json_gives_a_run_its_counts_after_its_fields_and_an_unreadable_one_none(
    repo: Repo, ledgers: Layout
) -> None:
    (ledgers.ledgers_dir / "harness-20260104T000000Z-000004.json").write_text('{"run_id": ')
    runs = json.loads(repo.uh("status", "--json").stdout)["harness"]["ledgers"]
    own = [f.name for f in dataclasses.fields(LedgerView)]
    added = [key for key in Tally().as_dict() if key not in own]
    assert added and list(runs[0]) == own + added  # the run's fields, then the rate's
    assert [r["pass_rate"] for r in runs[:3]] == RATES
    broken = runs[3]
    assert broken["run_id"] == "harness-20260104T000000Z-000004" and broken["problem"]
    assert "pass_rate" not in broken and "judged" not in broken


def test_the_closing_advice_names_promote_only_for_what_passed(ledgers: Layout) -> None:
    first, second, third = (read_ledger(path) for path in list_ledgers(ledgers))
    [advice] = next_steps(first)
    assert advice == (
        "next: review, then uh-core promote m0 --branch harness/m0 --approved-by NAME (or p in uh)"
    )
    assert next_steps(third) == [NOTHING_TO_PROMOTE] and exit_code(third) == 1
    both = second.model_copy(deep=True)
    both.requirements[1].outcome = "pass"
    lines = next_steps(both)
    assert lines[0].startswith("next: review, then promote each of the 2 missions")
    assert lines[1:] == [
        "  uh-core promote m0 --branch harness/m0 --approved-by NAME",
        "  uh-core promote m1 --branch harness/m1 --approved-by NAME",
    ]
    for ledger in (first, second, third):
        assert "merge" not in render(ledger, "x").lower()
