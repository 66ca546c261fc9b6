"""Steering an agent at work: the messages a human sends (``uh-core mission steer``) and how
the run that is addressed delivers them.

A message is a ``steering.message`` event in the mission's log, addressed by ``run_id`` to
the run working on the mission (the harness run, or the ``mission run``). That run follows
its mission's log from where it stood when the mission started (``Steering``: by byte
offset, whole lines only) and takes the messages addressed to it:

- when its agent's turn ends well (exit 0, in time, not cancelled), by **continuing the
  agent in the same sandbox** (``Adapter.continue_with``: a ``command`` or ``script``
  runtime runs again with the message appended to its prompt file and ``UH_STEERING``
  naming it), before the gate judges anything;
- else in the **next round's prompt** (``## The operator's steering``);
- and, should the mission's rounds end first, not at all: said so (``delivered: false``).

Each message taken is one ``runtime.steered`` event (how it was delivered) in the mission's
log and a ``SteerRecord`` in the round's ledger record. Nothing here is trusted by the gate:
a message is text for the agent, like the mission's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from uh_core.events.writer import EventLog
from uh_core.follow import LineFollower
from uh_core.models.events import RuntimeSteered, SteeringMessage
from uh_core.models.ledger import SteerRecord
from uh_core.shown import fenced

if TYPE_CHECKING:
    from uh_core.adapters.base import Adapter, LaunchContext, LaunchPlan, Session
    from uh_core.models.runtime import RuntimeResult

    Turn = tuple[LaunchPlan, Session, RuntimeResult, str]  # a launch and how it ended

MAX_CHARS = 8000  # a message or an answer is a hint, not a document: a longer one is refused
HEADING = "## The operator's steering"
_MARK = b"steering.message"  # every line uh writes for one holds the name as is


@dataclass(frozen=True)
class Steer:
    message: str
    by: str
    at: str


@dataclass
class Steering:
    """The messages addressed to ``run_id`` in one mission's log, from where it stands now."""

    path: Path
    run_id: str
    runtime: str
    pending: list[Steer] = field(default_factory=list)
    _follower: LineFollower = field(init=False)

    def __post_init__(self) -> None:
        try:
            size = self.path.stat().st_size
        except OSError:
            size = 0
        self._follower = LineFollower(self.path, offset=size)

    def take(self) -> list[Steer]:
        """Every message sent to this run and not taken yet, oldest first."""
        from uh_core.events.reader import parse_event

        for line in self._follower.lines():
            if _MARK not in line:
                continue
            event = parse_event(line)
            mine = isinstance(event, SteeringMessage) and event.run_id == self.run_id
            if mine and isinstance(event, SteeringMessage) and event.message.strip():
                self.pending.append(Steer(event.message, event.by, event.timestamp))
        taken, self.pending = self.pending, []
        return taken

    def record(
        self,
        log: EventLog,
        steers: list[Steer],
        delivery: str,
        delivered: bool = True,
        attempt: int | None = None,
    ) -> list[SteerRecord]:
        """``runtime.steered`` for each message, and its record for the ledger."""
        records = []
        for steer in steers:
            log.emit(
                RuntimeSteered(
                    runtime=self.runtime, message=steer.message, by=steer.by,
                    requested_at=steer.at, delivery=delivery, delivered=delivered,
                    attempt=attempt,
                )
            )  # fmt: skip
            records.append(
                SteerRecord(
                    message=steer.message, by=steer.by, at=steer.at, delivery=delivery,
                    delivered=delivered,
                )
            )  # fmt: skip
        return records


def section(steers: list[Steer]) -> str:
    """What an agent reads of the messages: in its continued prompt, or the next round's."""
    parts = [
        f"{HEADING}\n\nThe operator watching your work sent "
        + ("this message" if len(steers) == 1 else f"these {len(steers)} messages, in order")
        + ". Your work so far is in this worktree; continue from it, following what they say."
    ]
    for steer in steers:
        who = steer.by or "the operator"
        parts.append(f"From {who} ({steer.at}):\n\n{fenced(steer.message)}")
    return "\n\n".join(parts)


def joined(steers: list[Steer]) -> str:
    """``UH_STEERING``: the messages' text, separated by blank lines."""
    return "\n\n".join(steer.message for steer in steers)


def with_steering(prompt: str, steers: list[Steer]) -> str:
    """``prompt`` with the steering section before its closing final-message instruction
    (which stays last), or at its end."""
    from uh_core.adapters.sentinel import INSTRUCTION

    text, closing = prompt.rstrip("\n"), INSTRUCTION.strip()
    if text.endswith(closing):
        head = text[: -len(closing)].rstrip("\n")
        return f"{head}\n\n{section(steers)}\n\n{closing}\n"
    return f"{text}\n\n{section(steers)}\n"


def session_message(steers: list[Steer]) -> str:
    """The new message to a CLI resuming its own session: the steering section, then the
    final-message instruction (its answer must end with the block again)."""
    from uh_core.adapters.sentinel import INSTRUCTION

    return f"{section(steers)}\n\n{INSTRUCTION.strip()}\n"


def check_text(text: str, noun: str) -> str:
    """A human's text for an agent (a steering message, an answer), stripped: refused when
    empty, over ``MAX_CHARS``, or holding a NUL."""
    from uh_core.errors import UsageError

    said = text.strip()
    if not said:
        raise UsageError(f"the {noun} is empty", fix='say what the agent should do: "use …"')
    if len(said) > MAX_CHARS:
        raise UsageError(
            f"the {noun} is {len(said):,} characters; at most {MAX_CHARS:,} are sent",
            fix="shorten it to what the agent needs, or point to a file in the repository",
        )
    if "\0" in said:
        raise UsageError(f"the {noun} holds a NUL character", fix="send plain text")
    return said


@dataclass
class Turns:
    """An agent's turns in one round: the last launch and how it ended, every session (their
    usage adds up), the steering delivered and how many turns continued one."""

    plan: LaunchPlan
    session: Session
    result: RuntimeResult
    final: str
    sessions: list[Session]
    steered: list[SteerRecord] = field(default_factory=list)
    continued: int = 0


def continue_steered(
    adapter: Adapter,
    ctx: LaunchContext,
    first: Turn,
    steering: Steering | None,
    log: EventLog,
    turn: Callable[[LaunchPlan, Session], tuple[RuntimeResult, str]],
    stopped: Callable[[], bool],
    attempt: int | None = None,
) -> Turns:
    """While the operator has steered the agent and its turn ended well, continue it in the
    same sandbox with the message(s) (``Adapter.continue_with``); ``turn`` starts, watches
    and collects one launch (``mission run``'s, the harness's). One loop for both."""
    from uh_core.adapters.base import Continuation
    from uh_core.errors import UhError
    from uh_core.models.events import RuntimeProgress

    plan, session, result, final = first
    done = Turns(plan, session, result, final, [session])
    prompt = Path(plan.prompt_file).read_text(encoding="utf-8")
    sent: list[Steer] = []  # every message delivered this round
    while steering is not None and done.result.status == "completed" and not stopped():
        steers = steering.take()
        if not steers:
            break
        follow = adapter.continue_with(
            ctx,
            Continuation(
                prompt=with_steering(prompt, [*sent, *steers]),  # the prompt, all that was said
                message=session_message(steers),  # a resumed session has the rest already
                steering=joined(steers),
                session_id=done.session.parser.session_id,
                n=done.continued + 1,
            ),
        )
        if follow is None:  # mission steer refuses such a runtime; the next round has it
            steering.pending[:0] = steers
            break
        sent += steers
        done.steered += steering.record(log, steers, adapter.steer_by or "", attempt=attempt)
        done.continued += 1
        try:
            plan = adapter.prepare(follow)
            session = adapter.launch(plan)
        except UhError as exc:  # the earlier turns' work stands; it is judged as it is
            log.emit(
                RuntimeProgress(runtime=steering.runtime, kind="blocker", message=exc.one_line())
            )
            break
        done.plan, done.session = plan, session
        done.result, done.final = turn(plan, session)
        done.sessions.append(session)
    return done
