"""Degraded evidence: a criterion that declares its intended evidence cannot be obtained here
takes its substitute's verdict, and the forfeited part is a named residual gap with its owner
in every summary — never a plain pass."""

from __future__ import annotations

import json

from tests.conftest import Repo
from tests.harness.conftest import Project

DEGRADED = """\
  - id: works-on-arm
    check_command: 'true'
    degraded:
      forfeited: a run on real ARM hardware
      substitute: the x86 run under qemu-user
      residual_owner: release-team
      cadence: before each release
"""
GAP = (
    "residual gap: a run on real ARM hardware (owner release-team, before each release); "
    "substitute: the x86 run under qemu-user"
)


def test_verify_takes_the_substitutes_verdict_and_names_the_gap(repo: Repo) -> None:
    repo.mission("m", "id: m\nacceptance_criteria:\n" + DEGRADED)
    result = repo.uh("verify", "m")
    assert result.code == 0, result.stderr  # the substitute passed: the criterion passed
    assert f"  degraded   works-on-arm (passed on its substitute): {GAP}" in result.stdout
    data = json.loads(repo.uh("verify", "m", "--json").stdout)
    [ac] = data["acceptance_criteria"]
    assert ac["status"] == "passed" and ac["degraded"]["residual_owner"] == "release-team"
    failing = DEGRADED.replace("'true'", "'false'")
    repo.mission("m", "id: m\nacceptance_criteria:\n" + failing)
    assert repo.uh("verify", "m").code == 1  # the substitute's failure is its failure
    status = json.loads(repo.uh("status", "--json").stdout)
    assert GAP in json.dumps(status)  # the dashboard's reader carries it
    bad = DEGRADED.replace("      residual_owner: release-team\n", "")
    repo.mission("m", "id: m\nacceptance_criteria:\n" + bad)
    refused = repo.uh("mission", "validate", "m")
    assert refused.code == 2 and "residual_owner" in refused.stderr


def test_the_harness_summary_and_report_name_the_gap(project: Project) -> None:
    mission = project.root / ".harness/missions/calc/mission.yaml"
    mission.write_text(mission.read_text().replace("tests:\n", DEGRADED + "tests:\n"))
    project.repo.commit("a degraded criterion")
    agent = project.agent("good", 'write("src/calc.py", GOOD)\n')
    result = project.run("--agent", agent)
    assert result.code == 0, result.stderr
    assert f"    degraded: works-on-arm: {GAP}" in result.stdout
    report = project.repo.uh("harness", "report")
    assert f"  calc: works-on-arm: {GAP}" in report.stdout
    data = json.loads(project.repo.uh("harness", "report", "--format", "json").stdout)
    assert data["residual_gaps"] == {"calc": [f"works-on-arm: {GAP}"]}


def test_the_schemas_carry_it() -> None:
    import subprocess
    import sys

    for name in ("mission", "verification-result"):
        out = subprocess.run(
            [sys.executable, "-m", "uh_core", "schema", name],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert '"Degraded"' in out and '"residual_owner"' in out, name
