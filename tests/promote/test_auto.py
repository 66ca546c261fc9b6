"""``sandbox.promotion_policy: auto-on-verify``: a passing sandbox verify promotes by itself;
anything else, a typo included, leaves the decision to a human."""

from __future__ import annotations

import json

from tests.conftest import git
from tests.promote.conftest import BAD, GOOD, MISSION, Project
from uh_core.models.mission import Mission
from uh_core.promote.policy import is_auto, policy_typo


def with_policy(project: Project, policy: str) -> None:
    project.repo.mission("calc", MISSION + f"sandbox:\n  promotion_policy: {policy}\n")
    project.repo.commit(f"policy {policy}")


def test_a_passing_verify_promotes(project: Project) -> None:
    with_policy(project, "auto-on-verify")
    entry = project.sandbox({"src/calc.py": GOOD})
    base = git(project.root, "rev-parse", "HEAD").strip()
    result = project.verify(entry)
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("[PASS] calc")
    head = git(project.root, "rev-parse", "HEAD").strip()
    assert head != base and git(project.root, "rev-parse", "HEAD~1").strip() == base
    assert f"promotion: auto-on-verify promoted {entry.id} as {head[:12]}" in result.stdout
    assert (project.root / "src/calc.py").read_text() == GOOD
    assert "Approved-by: auto-on-verify" in git(project.root, "log", "-1", "--format=%B")
    record = project.record()
    assert record["auto"] is True and record["approved_by"] == "auto-on-verify"
    assert record["decision"] == "promoted" and record["verification_status"] == "passed"
    assert record["commit"] == head
    assert project.promotion_events() == ["promotion.auto-triggered", "promotion.recorded"]
    audit = project.promotion_events(".harness/audit/events.ndjson")
    assert audit == ["promotion.auto-triggered", "promotion.recorded"]
    triggered = next(
        e
        for e in project.events(".harness/missions/calc/events.ndjson")
        if e["event"] == "promotion.auto-triggered"
    )
    assert triggered["sandbox_id"] == entry.id and triggered["runtime"] == "fix"
    assert triggered["verify_run_id"] == record["verification_run_id"]


def test_json_output_stays_the_verification_result(project: Project) -> None:
    with_policy(project, "auto-on-verify")
    entry = project.sandbox({"src/calc.py": GOOD})
    result = project.repo.uh("verify", "calc", "--sandbox", entry.id, "--json")
    assert result.code == 0
    assert json.loads(result.stdout)["schema_version"] == "uh.verification-result.v0"
    assert project.record()["auto"] is True


def test_a_failing_verify_promotes_nothing(project: Project) -> None:
    with_policy(project, "auto-on-verify")
    entry = project.sandbox({"src/calc.py": BAD})
    before = project.picture()
    assert project.verify(entry).code == 1
    assert project.picture() == before
    assert project.promotion_events() == []


def test_a_typo_means_a_human_decides(project: Project) -> None:
    with_policy(project, "auto-on-verfy")
    entry = project.sandbox({"src/calc.py": GOOD})
    before = project.picture()
    result = project.verify(entry)
    assert result.code == 0
    assert "sandbox.promotion_policy 'auto-on-verfy' is not 'auto-on-verify'" in result.stderr
    assert project.picture() == before
    assert project.promotion_events() == []
    assert not (project.root / ".harness/missions/calc/promotion.yaml").exists()
    validate = project.repo.uh("mission", "validate", "calc")
    assert validate.code == 0 and "a human decides" in validate.stderr


def test_other_values_mean_a_human_decides_without_a_warning(project: Project) -> None:
    with_policy(project, "manual")
    entry = project.sandbox({"src/calc.py": GOOD})
    before = project.picture()
    result = project.verify(entry)
    assert result.code == 0 and "promotion_policy" not in result.stderr
    assert project.picture() == before and project.promotion_events() == []


def test_a_failure_to_apply_is_recorded_and_the_verdict_stands(project: Project) -> None:
    with_policy(project, "auto-on-verify")
    entry = project.sandbox({"src/calc.py": GOOD})
    (project.root / "docs/notes.md").write_text("uncommitted\n")
    before = project.picture()
    result = project.verify(entry)
    assert result.code == 0 and result.stdout.startswith("[PASS] calc")
    assert f"auto-on-verify did not promote {entry.id}: the main checkout has uncommitted" in (
        result.stderr
    )
    assert project.picture() == before
    assert project.promotion_events() == ["promotion.auto-triggered", "promotion.auto-failed"]
    failed = project.events(".harness/missions/calc/events.ndjson")[-1]
    assert "uncommitted changes: docs/notes.md" in failed["reason"]
    assert not (project.root / ".harness/missions/calc/promotion.yaml").exists()
    # The sandbox's verification is untouched and a human can still promote it.
    (project.root / "docs/notes.md").write_text("notes\n")
    assert project.promote_json("--approved-by", "ada")["verification_status"] == "passed"


def test_a_conflict_is_auto_failed_too(project: Project) -> None:
    with_policy(project, "auto-on-verify")
    entry = project.sandbox({"src/calc.py": GOOD})
    project.repo.write("src/calc.py", "def add(a, b):\n    return sum((a, b))\n")
    project.repo.commit("main implements it too")
    before = project.picture()
    result = project.verify(entry)
    assert result.code == 0
    assert "conflicts in src/calc.py" in result.stderr
    assert project.picture() == before
    assert project.promotion_events()[-1] == "promotion.auto-failed"


def test_policy_reading() -> None:
    def mission(policy: str | None) -> Mission:
        return Mission.model_validate({"id": "m", "sandbox": {"promotion_policy": policy}})

    assert is_auto(mission("auto-on-verify"))
    for value in (None, "Auto-On-Verify", "auto_on_verify", "auto-on-verfy", "manual", ""):
        assert not is_auto(mission(value))
    for typo in (
        "Auto-On-Verify",
        "auto_on_verify",
        "auto-on-verfy",
        "auto-verify",
        "autoonverify",
    ):
        assert policy_typo(mission(typo)) is not None, typo
    for fine in (None, "auto-on-verify", "manual", "human", "never"):
        assert policy_typo(mission(fine)) is None, fine
