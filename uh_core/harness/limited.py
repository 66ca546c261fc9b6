"""What the loop does when a provider's limit stops an attempt (docs/harness.md "Provider
limits"): the next of ``fallback_runtimes`` takes the mission over, else it is parked
(``uh_core.harness.parking``), or it ends ``rate_limited`` when it cannot wait."""

from __future__ import annotations

from dataclasses import replace

from uh_core.errors import UhError
from uh_core.events.writer import EventLog
from uh_core.harness.agent import agent_spec
from uh_core.harness.deps import Deps
from uh_core.harness.parking import park
from uh_core.models.events import HarnessFallback
from uh_core.models.ledger import AttemptRecord, RequirementRecord
from uh_core.models.mission import Mission


def on_limit(
    deps: Deps,
    mission: Mission,
    record: RequirementRecord,
    current: AttemptRecord,
    parks: int,
    log: EventLog,
) -> tuple[Deps, float | None]:
    """A provider limit: the next fallback runtime takes over (the deps it runs with), or
    the mission is parked (the monotonic moment it tries again; ``record.outcome`` set to
    ``rate_limited`` when it cannot wait)."""
    runtime = deps.spec.name
    tried = {runtime, *(f.split(" → ")[1].split(":")[0] for f in record.fallbacks)}
    fallback = next((r for r in deps.settings.fallback_runtimes if r not in tried), None)
    if fallback is not None:
        try:
            spec = agent_spec(deps.layout, None, fallback, deps.settings)
        except UhError as exc:
            record.fallbacks.append(f"{runtime} → {fallback}: cannot run: {exc.one_line()}")
        else:
            record.fallbacks.append(f"{runtime} → {fallback}: {current.verdict}")
            log.emit(
                HarnessFallback(
                    attempt=current.attempt, runtime=runtime, to=fallback, reason=current.verdict
                )
            )
            deps.progress(f"{mission.id}: {runtime} rate limited; {fallback} takes over")
            return replace(deps, spec=spec), None
    ended, moment = park(record, current, runtime, parks, deps.limits, deps.deadline, log)
    if ended is not None:
        record.outcome, record.reason = "rate_limited", ended
        deps.progress(f"{mission.id}: {ended}")
    else:
        deps.progress(
            f"{mission.id}: {runtime} rate limited; parked until {record.parked[-1]['until']}"
        )
    return deps, moment
