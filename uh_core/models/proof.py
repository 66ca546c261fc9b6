"""Fail-to-pass: the judge's proof that the tests test the change (uh_core/judge/failtopass.py).

Kept in the tests stage's evidence (a harness ledger), a sandbox's verification record and a
promotion's record; one line of it is what people read everywhere."""

from __future__ import annotations

from pydantic import Field

from uh_core.models.base import Open


class FailToPass(Open):
    """The tests stage's proof that the tests test the change (uh_core/judge/failtopass.py),
    kept in its evidence as ``fail_to_pass`` and in a promotion's record."""

    required: list[str] = Field(default_factory=list)  # the mission's tests: selectors
    test_files: list[str] = Field(default_factory=list)  # the test files the patch touched
    # what the tests ran over: the base commit, or f2p-<digest> (its source + the judged tests)
    tree: str | None = None
    command: str | None = None
    cached: bool = False
    duration_ms: int = 0
    fail_to_pass: list[str] = Field(default_factory=list)  # not passing before: the evidence
    pass_to_pass: list[str] = Field(default_factory=list)  # passing before, not required
    vacuous: list[str] = Field(default_factory=list)  # required and passing before
    allow_passing_at_base: bool = False
    problem: str | None = None  # why there is no verdict (then the lists are empty)

    def line(self) -> str:
        """One line for people: ``fail-to-pass 2 · pass-to-pass 1 · vacuous 0``, or why none."""
        if self.problem:
            return f"fail-to-pass: {self.problem}"
        counts = (
            f"fail-to-pass {len(self.fail_to_pass)} · pass-to-pass {len(self.pass_to_pass)} · "
            f"vacuous {len(self.vacuous)}"
        )
        allowed = self.vacuous and self.allow_passing_at_base
        return counts + (" (allowed: allow_passing_at_base)" if allowed else "")
