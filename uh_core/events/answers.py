"""A mission's hand-over and the human's answers to it, from its event log: one rule for the
engine (which continues an answered mission) and every reader (status, the dashboard).

- A mission's rounds end: ``harness.requirement.finished`` with at least one attempt. When its
  outcome is ``blocked`` that is a **hand-over** (its run, code and reason are kept); any
  other outcome leaves none to answer.
- ``harness.handover.answered`` after a hand-over is an **answer**; several in a row are all
  kept, in order.
- A run takes the answers given before its ``harness.requirement.started`` (``taken``); when
  its rounds end (``harness.requirement.finished`` with an attempt) those are used, no longer
  pending. An answer given while the rounds ran is kept for the next hand-over, if they end
  blocked again (dropped otherwise: there is nothing left to answer). A run that skipped the
  mission, or stopped before any attempt (a crash, a budget), leaves them all pending, so
  ``--resume`` still sends them.

Files are read in the order written (the one NDJSON writer appends whole lines), never by
timestamp.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from uh_core.models.events import (
    BaseEvent,
    HarnessHandoverAnswered,
    HarnessRequirementFinished,
    HarnessRequirementStarted,
)

if TYPE_CHECKING:
    from uh_core.models.ledger import HandoverAnswer


@dataclass(frozen=True)
class Handover:
    """The rounds that ended ``blocked`` and are waiting for a human."""

    run_id: str | None
    code: str | None
    reason: str | None
    at: str


@dataclass(frozen=True)
class Answer:
    text: str
    by: str
    at: str
    handover_run: str | None = None


@dataclass
class AnswerFold:
    """Folds a mission log's events, in order, into its open hand-over and pending answers."""

    handover: Handover | None = None  # the last rounds ended blocked (None: they did not)
    answers: list[Answer] = field(default_factory=list)  # given since, not yet used
    taken: int = 0  # how many of them the rounds started last took (their prompt has them)
    last: str | None = None  # how the last rounds ended (None: no rounds yet)

    def apply(self, event: BaseEvent) -> None:
        if isinstance(event, HarnessHandoverAnswered):
            if event.answer.strip():
                self.answers.append(
                    Answer(event.answer, event.by, event.timestamp, event.handover_run)
                )
        elif isinstance(event, HarnessRequirementStarted):
            self.taken = len(self.answers)
        elif isinstance(event, HarnessRequirementFinished) and event.attempts > 0:
            self.last = event.outcome
            blocked = event.outcome == "blocked"
            self.answers = self.answers[self.taken :] if blocked else []
            self.taken = 0
            self.handover = (
                Handover(event.run_id, event.code, event.reason, event.timestamp)
                if blocked
                else None
            )

    @property
    def waiting(self) -> bool:
        """Handed over, and nobody has answered yet."""
        return self.handover is not None and not self.answers


def authors(answers: Iterable[Answer | HandoverAnswer]) -> str:
    """Who answered, each once, in order: ``ana, bo``."""
    return ", ".join(dict.fromkeys(answer.by for answer in answers))


def read_answers(path: Path) -> AnswerFold:
    """The whole log folded (the engine's read, once per mission it starts)."""
    from uh_core.events.reader import read_events

    fold = AnswerFold()
    if path.is_file():
        for event in read_events(path)[0]:
            fold.apply(event)
    return fold


def is_answer_line(line: bytes) -> bool:
    """True when an event log line is a ``harness.handover.answered`` event, however it is
    spelled (escapes included): a line relayed from elsewhere (a Ray worker's stream) is
    never an operator's answer, so the head drops such a line instead of appending it."""
    if b"answered" not in line and b"\\u" not in line:
        return False  # the cheap test for the common line; any escape is decoded below
    from uh_core.events.reader import parse_event

    return isinstance(parse_event(line), HarnessHandoverAnswered)
