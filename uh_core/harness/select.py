"""Which missions a run takes, and in what order.

Missions with ``status: pending``, each after the pending missions it ``depends_on``
(ties broken by id, so the order is stable). ``--req ID`` narrows the list; a requested
mission that is not pending is listed as skipped with its status as the reason. Whether a
mission is *ready* (its dependencies done) is a separate question for the plan.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from uh_core.errors import HarnessError, NotFoundError, UhError
from uh_core.ids import check_id
from uh_core.layout import Layout
from uh_core.missions import LoadedMission, load_all


@dataclass
class Selection:
    missions: list[LoadedMission] = field(default_factory=list)  # to run, in order
    skipped: list[tuple[LoadedMission, str]] = field(default_factory=list)
    loaded: list[LoadedMission] = field(default_factory=list)  # every readable mission


def dependency_order(missions: list[LoadedMission]) -> list[LoadedMission]:
    """Topological order over ``depends_on`` among ``missions``. Missions on a cycle (or
    waiting on one) come last, by id: the plan reports them as ``dependency_cycle``, and
    ``harness run`` skips them under ``--skip-not-ready`` or runs them with a warning."""
    by_id = {m.mission.id: m for m in missions}
    waiting = {
        mid: {dep for dep in m.mission.depends_on if dep in by_id and dep != mid}
        for mid, m in by_id.items()
    }
    dependents: dict[str, list[str]] = {mid: [] for mid in by_id}
    for mid, deps in waiting.items():
        for dep in deps:
            dependents[dep].append(mid)
    ready = [mid for mid, deps in waiting.items() if not deps]
    heapq.heapify(ready)
    order: list[LoadedMission] = []
    while ready:
        mid = heapq.heappop(ready)
        order.append(by_id[mid])
        for child in dependents[mid]:
            waiting[child].discard(mid)
            if not waiting[child]:
                heapq.heappush(ready, child)
    if len(order) < len(by_id):
        order += [by_id[mid] for mid in sorted(mid for mid, deps in waiting.items() if deps)]
    return order


def _first_problem(broken: dict[str, UhError]) -> HarnessError:
    mission_id, error = sorted(broken.items())[0]
    more = f" (and {len(broken) - 1} more broken mission(s))" if len(broken) > 1 else ""
    return HarnessError(
        f"mission {mission_id}: {error.one_line()}{more}",
        fix="run `uh-core mission validate` and correct the file, or narrow the run with --req",
    )


def select(layout: Layout, requested: tuple[str, ...] = ()) -> Selection:
    """The missions a run takes. A broken mission file in the selection is refused (exit 2):
    it may be pending, or a dependency, and a run that silently leaves it out misleads."""
    loaded, broken = load_all(layout)
    by_id = {m.mission.id: m for m in loaded}
    if requested:
        chosen: list[LoadedMission] = []
        for mission_id in dict.fromkeys(requested):
            check_id(mission_id, "mission")
            if mission_id in broken:
                raise _first_problem({mission_id: broken[mission_id]})
            if mission_id not in by_id:
                known = ", ".join(sorted(by_id)) or "none"
                raise NotFoundError(
                    f"--req {mission_id}: unknown mission (known: {known})",
                    fix="run `uh-core mission list`",
                )
            chosen.append(by_id[mission_id])
    else:
        if broken:
            raise _first_problem(broken)
        chosen = sorted(loaded, key=lambda m: m.mission.id)
    selection = Selection(loaded=loaded)
    pending = []
    for item in chosen:
        if item.mission.status == "pending":
            pending.append(item)
        elif requested:
            selection.skipped.append(
                (item, f"status is {item.mission.status}; only pending missions run")
            )
    selection.missions = dependency_order(pending)
    return selection
