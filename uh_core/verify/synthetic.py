"""Harness-made criteria appended after the declared ones.

The TDD gate: a mission with ``tdd`` (``enforce_tests_first`` defaults to true) gets
``ac-tdd-tests-precede-code`` (severity block, ``synthetic: true``). Its evidence is the
mission's captured ``diff.patch``: source touched and no test touched fails; no diff, or
an empty one, blocks (nothing was checked, so nothing may pass).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from uh_core.errors import UhError
from uh_core.layout import Layout
from uh_core.models.mission import Mission, TddPolicy
from uh_core.models.verification import ACResult, Finding

TDD_ID = "ac-tdd-tests-precede-code"
TDD_DESCRIPTION = "A change that touches source also touches tests."
_LISTED = 50


@dataclass
class SyntheticCriterion:
    """A harness-made criterion (the TDD gate): evaluated in-process, reported like any AC.
    Here, not in the runner, so that listing planned criteria (the dashboard) does not
    import the runner."""

    id: str
    description: str
    evaluate: Callable[[], tuple[ACResult, list[Finding]]]


def _result(status: str, started: float, snippet: str = "", stderr: str = "") -> ACResult:
    return ACResult(
        id=TDD_ID,
        description=TDD_DESCRIPTION,
        severity="block",
        status=status,
        duration_ms=int((time.monotonic() - started) * 1000),
        stdout_snippet=snippet,
        stderr_snippet=stderr,
        synthetic=True,
    )


def evaluate_tdd(policy: TddPolicy, patch: Path, display: str) -> tuple[ACResult, list[Finding]]:
    from uh_core.diff.classify import classify_patch_file

    started = time.monotonic()
    if not patch.is_file() or patch.stat().st_size == 0:
        what = "is empty" if patch.is_file() else "does not exist"
        message = f"{display} {what}: no change to judge (capture it: `uh-core diff capture`)"
        finding = Finding(severity="error", code="tdd_no_diff", message=message, ac_id=TDD_ID)
        return _result("blocked", started, stderr=message), [finding]
    try:
        found = classify_patch_file(
            patch, test_globs=policy.test_paths or None, source_globs=policy.source_paths or None
        )
    except UhError as exc:
        message = f"{TDD_ID}: cannot read {display}: {exc.one_line()}"
        finding = Finding(
            severity="error", code="tdd_unreadable_diff", message=message, ac_id=TDD_ID
        )
        return _result("blocked", started, stderr=message), [finding]
    counts = f"tests={len(found.tests)} source={len(found.source)} other={len(found.other)}"
    if found.source and not found.tests:
        listed = "\n".join(found.source[:_LISTED])
        more = len(found.source) - _LISTED
        if more > 0:
            listed += f"\n… and {more} more"
        message = f"{TDD_ID}: the change touches {len(found.source)} source file(s) and no test"
        finding = Finding(
            severity="error", code="tdd_source_without_tests", message=message, ac_id=TDD_ID
        )
        return _result(
            "failed", started, f"{counts}\nsource touched without tests:\n{listed}\n", message
        ), [finding]
    return _result("passed", started, counts + "\n"), []


def tdd_criterion(mission: Mission, patch: Path, display: str) -> SyntheticCriterion | None:
    policy = mission.tdd
    if policy is None or not policy.enforce_tests_first:
        return None
    return SyntheticCriterion(TDD_ID, TDD_DESCRIPTION, lambda: evaluate_tdd(policy, patch, display))


def synthetic_criteria(
    layout: Layout, mission: Mission, patch: Path | None = None
) -> list[SyntheticCriterion]:
    """Harness-made criteria for ``mission``; ``patch`` defaults to its diff.patch."""
    path = patch or layout.diff_file(mission.id)
    criteria = [tdd_criterion(mission, path, layout.rel(path))]
    return [c for c in criteria if c is not None]


def planned(mission: Mission) -> list[tuple[str, str]]:
    """(id, description) of the harness-made criteria ``uh-core verify ID`` adds on the main
    checkout, known before it runs: what `mission list` counts and the dashboard lists."""
    policy = mission.tdd
    return [(TDD_ID, TDD_DESCRIPTION)] if policy is not None and policy.enforce_tests_first else []
