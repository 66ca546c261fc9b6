"""Provider limits in the delivery loop: a rate-limited attempt is not charged; the mission
is parked until the limit lifts, or handed to the next of ``fallback_runtimes:``.

- An attempt whose agent ended ``rate_limited`` (``uh_core.adapters.ratelimit``) and whose
  tree is not green is recorded with that outcome and not counted against
  ``--max-attempts``; its work stays in the worktree for the next round.
- The next runtime of ``fallback_runtimes`` not yet tried takes the mission over at once
  (recorded in ``fallbacks`` with why). Without one, the mission is **parked**: it waits
  until the limit lifts (``Retry-After`` or "resets at" when the CLI said, else 30 s,
  doubling to 10 minutes), then tries again. ``harness.mission.parked`` says until when.
- The wait is the runtime's: every mission of the run on that runtime waits for the same
  moment before its next attempt (``Limits``), so a ``--jobs`` run parks only that
  runtime's missions; the others go on.
- A wait past the run's ``budget_seconds``, or more than ``MAX_PARKS`` limits in one
  mission, ends the mission ``rate_limited`` with the figures in its reason. A cancel
  ends the wait at once.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from uh_core.clock import timestamp
from uh_core.events.writer import EventLog
from uh_core.models.events import HarnessParked
from uh_core.models.ledger import AttemptRecord, RequirementRecord
from uh_core.runtime.run import CancelToken

FIRST_WAIT_S = 30.0
MAX_WAIT_S = 600.0  # an unsaid reset: 30 s, doubling up to this
MAX_PARKS = 8
_POLL_S = 0.1


@dataclass
class Limits:
    """Runtime → the monotonic moment its limit lifts: shared by every mission of a run."""

    until: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hit(self, runtime: str, wait_s: float) -> float:
        with self.lock:
            moment = max(self.until.get(runtime, 0.0), time.monotonic() + wait_s)
            self.until[runtime] = moment
            return moment

    def lifts_at(self, runtime: str) -> float:
        with self.lock:
            return self.until.get(runtime, 0.0)


def wait_s(attempt: AttemptRecord, parks: int) -> float:
    """How long to wait: what the CLI said, else 30 s doubling with each park (at most 10 min)."""
    if attempt.retry_after_s is not None:
        return max(0.0, attempt.retry_after_s)
    return float(min(FIRST_WAIT_S * 2 ** max(0, parks - 1), MAX_WAIT_S))


def wait_until(moment: float, token: CancelToken) -> bool:
    """Sleep until ``moment`` (monotonic); False when a cancel came first."""
    while (left := moment - time.monotonic()) > 0:
        if token.reason is not None:
            return False
        time.sleep(min(_POLL_S, left))
    return token.reason is None


def park(
    record: RequirementRecord,
    attempt: AttemptRecord,
    runtime: str,
    parks: int,
    limits: Limits,
    deadline: float | None,
    log: EventLog,
) -> tuple[str | None, float]:
    """Note the limit for the runtime and the mission: (the reason the mission ends
    ``rate_limited`` — too many limits, a wait past the run's time budget — or None, the
    monotonic moment this mission tries again). The runtime's other missions wait for the
    latest moment any of them was given (``limits``) before their next attempt."""
    wait = wait_s(attempt, parks)
    moment = time.monotonic() + wait
    if parks > MAX_PARKS:
        return f"rate limited {parks} times on {runtime}; the last: {attempt.verdict}", moment
    limits.hit(runtime, wait)
    if deadline is not None and moment > deadline:
        return (
            f"rate limited on {runtime}: the limit lifts in {wait:.0f} s, "
            f"after the run's budget_seconds ({attempt.verdict})"
        ), moment
    left = max(0.0, moment - time.monotonic())
    until = timestamp_after(left)
    record.parked.append(
        {"attempt": attempt.attempt, "runtime": runtime, "at": timestamp(), "until": until,
         "wait_s": round(left, 3), "reason": attempt.verdict}
    )  # fmt: skip
    log.emit(
        HarnessParked(
            attempt=attempt.attempt, runtime=runtime, until=until, wait_s=round(left, 3),
            reason=attempt.verdict,
        )
    )  # fmt: skip
    return None, moment


def timestamp_after(seconds: float) -> str:
    """The wall-clock moment ``seconds`` from now, as every record writes time."""
    from datetime import UTC, datetime, timedelta

    moment = datetime.now(UTC) + timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
