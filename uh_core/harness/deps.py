"""What every mission of one harness run shares (``Deps``), and the callbacks it reports
through: ``Progress`` (one line for the operator) and ``Where`` (the mission and attempt in
progress, for the run's registration)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from uh_core.harness.agent import AgentSpec
from uh_core.harness.config import Settings
from uh_core.harness.parking import Limits
from uh_core.isolation import Resolved
from uh_core.layout import Layout
from uh_core.models.harness_config import Profile
from uh_core.models.ledger import AttemptRecord, RequirementRecord
from uh_core.runtime.run import CancelToken
from uh_core.security.guard import EngineWrites

Progress = Callable[[str], None]
# a mission in progress, its attempt (0: preparing) and its sandbox once it has one
Where = Callable[[str, int, str | None], None]
ENDED = -1  # told to ``where`` when a mission has ended


def _nowhere(_mission_id: str, _attempt: int, _sandbox_id: str | None = None) -> None:
    return None


def _no_attempts() -> list[AttemptRecord]:
    return []


@dataclass
class Deps:
    """What every requirement of one run shares. Each mission runs with its own copy
    (``dataclasses.replace``): ``current`` and ``engine`` are the same objects in every copy."""

    layout: Layout
    settings: Settings
    spec: AgentSpec
    base_commit: str
    run_id: str
    token: CancelToken
    progress: Progress
    # The missions in progress (id → record), so a run stopped by an exception can still
    # write each into the ledger.
    current: dict[str, RequirementRecord] = field(default_factory=dict)
    profiles: list[Profile] = field(default_factory=list)
    specs: dict[str, AgentSpec] = field(default_factory=dict)  # profile name → its agent
    profile: Profile | None = None  # the profile of the mission in progress
    isolation: Resolved | None = None  # how agents run (resolved once, before the run)
    where: Where = _nowhere  # told before each mission's sandbox and each attempt, and its end
    engine: EngineWrites | None = None  # what the engine writes in the operator's repository
    side_by_side: bool = False  # other missions run in this process meanwhile (--jobs > 1)
    # Every attempt of the run so far, the missions in progress included (the run's spend)
    run_attempts: Callable[[], list[AttemptRecord]] = _no_attempts
    limits: Limits = field(default_factory=Limits)  # providers' limits per runtime: shared
    deadline: float | None = None  # monotonic: the run's budget_seconds ends (parking)
