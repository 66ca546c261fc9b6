"""Rounds that must make progress, and the hand-over when they stop (docs/harness.md,
"Rounds must make progress").

- ``no_progress``: a round whose judged tree equals an earlier round's, or whose failure
  (stage, finding codes, failing criteria) and own change equal the previous round's, ends
  the mission's rounds: another round would spend the same money on the same hypothesis.
- A mission whose rounds end red (``no_progress``, or the last allowed round) is ``blocked``
  for a human with a ``Handover``: per round the agent's hypothesis, the change's scope, the
  rerun verdict on the same criteria and the prompt sent.
- Same case, same judge: every round records the hash of the judge it ran (``judge``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from uh_core.diff.stats import hunk_stats
from uh_core.errors import UhError
from uh_core.git import git
from uh_core.harness.config import Settings
from uh_core.models.ledger import (
    AttemptRecord,
    Handover,
    HandoverCode,
    HandoverRound,
    RequirementRecord,
    RoundFile,
)
from uh_core.models.mission import Mission

NONE_GIVEN = "none given"


def judge_of(mission: Mission, settings: Settings) -> str:
    """The hash of everything that judges a round: the criteria (ids, commands, severities,
    timeouts), the required checks, ``tdd``, the test command, the selectors and retired
    tests, the report file. The mission is the base commit's copy and the settings are the
    run's, so it is the same in every round; the ledger records it to show it."""
    judge = {
        "criteria": [
            [c.id, c.check_command, c.severity, c.timeout_s] for c in mission.acceptance_criteria
        ],
        "checks": [[c.name, c.command] for c in mission.verification.required_checks],
        "tdd": mission.tdd.model_dump(mode="json") if mission.tdd is not None else None,
        "test_cmd": settings.test_cmd,
        "selectors": list(mission.tests),
        "retire_tests": list(mission.retire_tests),
        "message_report": settings.message_report,
        "strict": [settings.strict_tests, settings.strict_artifacts],
    }
    text = json.dumps(judge, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def change_signature(root: Path, git_dir: Path, before: str, after: str) -> str:
    """This round's own change, from ``before`` (the previous round's tree, or the base) to
    ``after``: the files and the lines added and removed, without positions or blob ids, so
    the same edit made again on a tree that moved on reads the same."""
    diff = git(
        root, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
        "--unified=0", before, after, "--", git_dir=git_dir,
    )  # fmt: skip
    kept = [
        line
        for line in diff.splitlines()
        if line.startswith(("diff --git", "+", "-")) and not line.startswith(("+++", "---"))
    ]
    return hashlib.sha256("\n".join(kept).encode("utf-8", "replace")).hexdigest()[:16]


def failing_criteria(current: AttemptRecord) -> list[str]:
    """The criteria and selectors that did not pass in this round (from the stages' evidence)."""
    failed: list[str] = []
    for stage in current.stages:
        for ac, status in (stage.evidence.get("criteria") or {}).items():
            if status != "passed":
                failed.append(f"{ac}: {status}")
        for selector, status in (stage.evidence.get("selectors") or {}).items():
            if status != "passed":
                failed.append(f"{selector}: {status}")
    return sorted(failed)


def failure_of(current: AttemptRecord) -> tuple[str | None, list[str], list[str]]:
    codes = sorted({f.code for s in current.stages if not s.passed for f in s.findings})
    return current.stage, codes, failing_criteria(current)


def no_progress(rounds: list[AttemptRecord]) -> str | None:
    """Why the last of ``rounds`` (this run's, oldest first) made no progress, or None."""
    current = rounds[-1]
    if current.outcome != "fail":
        return None
    for earlier in rounds[:-1]:
        if current.tree is not None and earlier.tree == current.tree:
            return (
                f"round {current.attempt} judged the same tree as round {earlier.attempt}: "
                f"nothing the gate reads changed"
            )
    if len(rounds) < 2:
        return None
    previous = rounds[-2]
    if (
        previous.outcome == "fail"
        and current.change is not None
        and current.change == previous.change
        and failure_of(current) == failure_of(previous)
    ):
        return (
            f"round {current.attempt} repeated round {previous.attempt}'s change and failed "
            f"the same way (at {current.stage})"
        )
    return None


def _criteria(mission: Mission, current: AttemptRecord) -> dict[str, str]:
    """The rerun verdict on the same criteria: every criterion of the mission, each with its
    status in this round (``not run`` when the gate stopped before verify)."""
    shown = {c.id: "not run" for c in mission.acceptance_criteria}
    shown.update({s: "not run" for s in mission.tests})
    for stage in current.stages:
        shown.update(stage.evidence.get("criteria") or {})
        shown.update(stage.evidence.get("selectors") or {})
    return shown


def _files(patch: Path) -> list[RoundFile]:
    try:
        stats = hunk_stats(patch.read_bytes())
    except (OSError, UhError):
        return []
    return [RoundFile(path=s.path, added=s.added, removed=s.removed) for s in stats]


def hand_over(
    record: RequirementRecord,
    mission: Mission,
    stalled: str | None,
    max_attempts: int,
    evidence_of: Callable[[int], Path],
) -> None:
    """The mission is ``blocked`` for a human, with every round of this run summarised:
    ``no_progress`` (``stalled`` says why) or ``rounds_exhausted``."""
    last = record.attempts[-1]
    code: HandoverCode = "no_progress" if stalled else "rounds_exhausted"
    why = stalled or f"round {last.attempt} of {max_attempts} ended {last.verdict}"
    rounds = [
        HandoverRound(
            round=a.attempt,
            hypothesis=a.final_message.strip() or NONE_GIVEN,
            files=_files(evidence_of(a.attempt) / "diff.patch"),
            verdict=a.verdict,
            criteria=_criteria(mission, a),
            prompt_file=a.prompt_file,
        )
        for a in record.attempts
    ]
    record.outcome = "blocked"
    record.handover = Handover(code=code, reason=why, rounds=rounds)
    record.reason = f"{code}: {why}; handed over to a human"


def change_of(root: Path, git_dir: Path, before: str, current: AttemptRecord) -> str | None:
    if current.tree is None:
        return None
    try:
        return change_signature(root, git_dir, before, current.tree)
    except UhError:
        return None
