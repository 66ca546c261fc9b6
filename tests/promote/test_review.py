"""What the review shows before a decision: the patch as promote would apply it, the
verification promote would judge, the comparison group, the last decision — and the
workspace snapshot showing that decision once made."""

from __future__ import annotations

import pytest

from tests.promote.conftest import GOOD, Project
from uh_core.errors import UhError
from uh_core.promote.review import review
from uh_core.workspace.store import Store


def test_review_of_a_verified_sandbox(project: Project) -> None:
    sandbox = project.sandbox({"src/calc.py": GOOD, "tests/test_calc.py": "# test\n"})
    assert project.verify(sandbox).code == 0
    seen = review(project.layout, "calc", sandbox_id=sandbox.id)
    assert seen.flags == ("--sandbox", sandbox.id)
    assert seen.source.verified.status == "passed"
    assert "+    return a + b" in seen.patch and ".harness/" not in seen.patch
    assert sorted(s.path for s in seen.stats) == ["src/calc.py", "tests/test_calc.py"]
    assert seen.last is None and seen.group is None and not seen.cut


def test_review_says_stale_after_an_edit_and_shows_the_last_decision(project: Project) -> None:
    sandbox = project.sandbox({"src/calc.py": GOOD})
    assert project.verify(sandbox).code == 0
    decided = project.promote(
        "--sandbox", sandbox.id, "--approved-by", "ada", "--decision", "deferred"
    )
    assert decided.code == 0, decided.stderr
    (project.root / sandbox.worktree / "src/calc.py").write_text("def add(a, b):\n    return 0\n")
    seen = review(project.layout, "calc", sandbox_id=sandbox.id)
    assert seen.source.verified.status == "stale"
    assert seen.last is not None and seen.last.decision == "deferred"

    snapshot = Store(project.root).settle()
    promotion = snapshot.mission("calc").promotion  # type: ignore[union-attr]
    assert promotion is not None
    assert (promotion.decision, promotion.approved_by) == ("deferred", "ada")
    assert promotion.source == f"sandbox {sandbox.id}"
    sandbox_row = next(s for s in snapshot.sandboxes if s.id == sandbox.id)
    assert sandbox_row.verify_status == "passed"


def test_review_of_nothing_is_one_clear_error(project: Project) -> None:
    with pytest.raises(UhError) as caught:
        review(project.layout, "calc", sandbox_id="sbx-calc-nope-20260101000000")
    assert "sbx-calc-nope" in caught.value.one_line()


def test_a_malformed_promotion_file_is_a_problem_on_the_row(project: Project) -> None:
    project.layout.promotion_file("calc").write_text("decision: [\n")
    mission = Store(project.root).settle().mission("calc")
    assert mission is not None and mission.promotion is None
    assert any("promotion.yaml" in p for p in mission.problems)
