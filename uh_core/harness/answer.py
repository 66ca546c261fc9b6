"""Answering a hand-over: ``uh-core harness answer ID "hint"`` and what the loop does with it.

A mission whose rounds ended ``blocked`` waits for a human (``uh_core.harness.progress``).
The human's answer is one ``harness.handover.answered`` event in the mission's log — the
record every reader folds (``uh_core.events.answers``: which answers are pending). The next
``harness run`` (``--resume`` not needed) continues that mission on its ``harness/<id>``
branch from its last round's tree, as ``--resume`` does, with a fresh series of up to
``max_attempts`` rounds numbered after the last one, and every pending answer in each of
their prompts (``section``). The rounds' ledger record keeps the answers (``answers``); the
earlier ledger keeps the hand-over they answered.
"""

from __future__ import annotations

from uh_core.clock import timestamp
from uh_core.errors import HarnessError
from uh_core.events.answers import Answer, AnswerFold, read_answers
from uh_core.events.writer import EventLog
from uh_core.layout import Layout
from uh_core.models.events import HarnessHandoverAnswered
from uh_core.models.ledger import HandoverAnswer
from uh_core.runtime.steering import check_text
from uh_core.shown import fenced

HEADING = "## The operator's answer"


def record_answer(layout: Layout, mission_id: str, text: str, by: str) -> HarnessHandoverAnswered:
    """Check that ``mission_id`` waits on a hand-over and append the answer to its log."""
    from uh_core.missions import load_mission

    load_mission(layout, mission_id)  # an unknown or unreadable mission says so, first
    answer = check_text(text, "answer")
    fold = read_answers(layout.mission_events(mission_id))
    handover = fold.handover
    if handover is None:
        ended = f"its last rounds ended {fold.last}" if fold.last else "it has no rounds yet"
        raise HarnessError(
            f"{mission_id} is not handed over: {ended}; only a blocked mission is answered",
            fix=f"`uh-core status` shows how {mission_id} stands; `harness run` starts it",
        )
    event = HarnessHandoverAnswered(
        answer=answer,
        by=by.strip() or "operator",
        handover_run=handover.run_id,
        code=handover.code,
        timestamp=timestamp(),
    )
    EventLog(layout.mission_events(mission_id), mission_id=mission_id).emit(event)
    return event


def pending(layout: Layout, mission_id: str) -> AnswerFold:
    """The mission's hand-over and the answers not yet used (read before a run starts it)."""
    return read_answers(layout.mission_events(mission_id))


def taken(layout: Layout, mission_id: str) -> list[Answer]:
    """The answers the rounds just started take: those before their
    ``harness.requirement.started`` (read after it is written, so one given meanwhile waits)."""
    fold = read_answers(layout.mission_events(mission_id))
    return fold.answers[: fold.taken]


def records(answers: list[Answer]) -> list[HandoverAnswer]:
    return [
        HandoverAnswer(answer=a.text, by=a.by, at=a.at, handover_run=a.handover_run)
        for a in answers
    ]


def section(answers: list[HandoverAnswer]) -> str:
    """The prompt's section: every answer, in order, each fenced as the operator wrote it."""
    parts = [
        f"{HEADING}\n\nYour earlier rounds on this mission were handed over to a human, who "
        "answered. Your work so far is still in this worktree; continue from it, following "
        "the answer."
    ]
    for n, answer in enumerate(answers, start=1):
        who = answer.by or "the operator"
        label = f"Answer {n} of {len(answers)}" if len(answers) > 1 else "Answer"
        parts.append(f"{label} ({who}, {answer.at}):\n\n{fenced(answer.answer)}")
    return "\n\n".join(parts)
