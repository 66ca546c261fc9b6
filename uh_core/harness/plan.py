"""Readiness: which missions of the backlog can run now, and what blocks the others.

``harness plan`` lists every mission not yet done (pending, deprecated, needs-clarification),
pending ones in the order a run takes them, each with ``ready`` and its blockers. ``harness
run`` asks the same question before each mission: ``nothing_can_fail`` is always skipped
(a green would be counterfeit), other blockers are skipped under ``--skip-not-ready`` and
otherwise run with a warning. The plan only reads: no git change, no worktree, no agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from uh_core.harness import workspace
from uh_core.harness.prompt import branch_name
from uh_core.harness.select import dependency_order
from uh_core.layout import Layout
from uh_core.missions import LoadedMission
from uh_core.models.mission import Mission

NOTHING_CAN_FAIL = "nothing_can_fail"
ALWAYS_SKIPPED = frozenset({NOTHING_CAN_FAIL})


@dataclass(frozen=True)
class Blocker:
    code: str
    message: str
    fix: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "fix": self.fix}


@dataclass
class PlanItem:
    mission: Mission
    blockers: list[Blocker] = field(default_factory=list)
    # a hand-over: "handed over (code): …" waiting for an answer, or "answered by …"
    handover: str | None = None

    @property
    def ready(self) -> bool:
        return not self.blockers

    def as_dict(self) -> dict[str, Any]:
        return {
            "mission_id": self.mission.id,
            "title": self.mission.display_title,
            "status": self.mission.status,
            "branch": branch_name(self.mission.id),
            "ready": self.ready,
            "blockers": [b.as_dict() for b in self.blockers],
            "handover": self.handover,
        }


def cycle_members(missions: dict[str, Mission]) -> set[str]:
    """Every mission on a ``depends_on`` cycle (Tarjan's strongly connected components)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    members: set[str] = set()
    counter = 0

    def edges(mid: str) -> list[str]:
        return [d for d in missions[mid].depends_on if d in missions]

    for start in sorted(missions):
        if start in index:
            continue
        # Iterative DFS: (node, iterator position) frames.
        work: list[tuple[str, int]] = [(start, 0)]
        while work:
            node, pos = work.pop()
            if pos == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            children = edges(node)
            if pos < len(children):
                work.append((node, pos + 1))
                child = children[pos]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1 or node in missions[node].depends_on:
                    members.update(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return members


def _dependents_of(cycle: set[str], missions: dict[str, Mission]) -> dict[str, list[str]]:
    """Missions that depend (directly or not) on a cycle member: the members they wait on."""
    result: dict[str, list[str]] = {}
    for mid in missions:
        if mid in cycle:
            continue
        seen: set[str] = set()
        todo = list(missions[mid].depends_on)
        reached: set[str] = set()
        while todo:
            dep = todo.pop()
            if dep in seen or dep not in missions:
                continue
            seen.add(dep)
            if dep in cycle:
                reached.add(dep)
            else:
                todo.extend(missions[dep].depends_on)
        if reached:
            result[mid] = sorted(reached)
    return result


def can_fail(mission: Mission, test_cmd: str | None) -> bool:
    """Whether anything in the gate can turn red besides the agent's exit code and scope."""
    if test_cmd:
        return True
    if mission.tdd is not None and mission.tdd.enforce_tests_first:
        return True
    return any(ac.severity == "block" and ac.check_command for ac in mission.criteria())


def branch_blocker(mission_id: str) -> Blocker:
    """``harness/<id>`` exists: the plan's blocker and the run's reason to skip the mission."""
    branch = branch_name(mission_id)
    return Blocker(
        "branch_exists", f"branch {branch} already exists",
        f"review or delete {branch}; --resume continues it, --force deletes and recreates it",
    )  # fmt: skip


def blockers_for(
    mission: Mission,
    missions: dict[str, Mission],
    cycle: set[str],
    cycle_dependents: dict[str, list[str]],
    test_cmd: str | None,
    branch_taken: bool,
) -> list[Blocker]:
    found: list[Blocker] = []
    mid = mission.id
    if mission.status == "deprecated":
        found.append(Blocker(
            "deprecated", f"{mid} is deprecated",
            "nothing to do; delete the mission or set status: pending to revive it",
        ))  # fmt: skip
    if mission.status == "needs-clarification":
        found.append(Blocker(
            "needs_clarification", f"{mid} needs clarification before anyone can implement it",
            "answer the open questions in its mission.yaml, then set status: pending",
        ))  # fmt: skip
    if mid in cycle:
        on_cycle = sorted(d for d in mission.depends_on if d in cycle)
        found.append(Blocker(
            "dependency_cycle",
            f"{mid} is on a depends_on cycle (through {', '.join(on_cycle)})",
            "remove one of the dependencies on the cycle in those mission.yaml files",
        ))  # fmt: skip
    elif mid in cycle_dependents:
        waits = ", ".join(cycle_dependents[mid])
        found.append(Blocker(
            "dependency_cycle",
            f"{mid} depends on {waits}, which is on a depends_on cycle",
            "break the cycle; this mission becomes ready once its dependencies are done",
        ))  # fmt: skip
    for dep in mission.depends_on:
        other = missions.get(dep)
        if other is None:
            found.append(Blocker(
                "dependency_not_done", f"{mid} depends on {dep}, which is not a known mission",
                f"create mission {dep} or remove it from depends_on",
            ))  # fmt: skip
        elif other.status != "done":
            found.append(Blocker(
                "dependency_not_done", f"{mid} depends on {dep}, whose status is {other.status}",
                f"deliver {dep} first (review and merge harness/{dep}), then plan again",
            ))  # fmt: skip
    if branch_taken:
        found.append(branch_blocker(mid))
    if not can_fail(mission, test_cmd):
        found.append(Blocker(
            NOTHING_CAN_FAIL,
            f"nothing in the gate can fail for {mid}: no blocking acceptance criterion with a "
            "command, no tdd policy, no test command — a green would be counterfeit",
            "give an acceptance criterion a check_command, add a tdd policy, or configure "
            "test_cmd",
        ))  # fmt: skip
    return found


def build_plan(
    layout: Layout,
    loaded: list[LoadedMission],
    test_cmd: str | None,
    ignore_branches: bool = False,
    only: set[str] | None = None,
) -> list[PlanItem]:
    """Every mission not done (or those in ``only``): pending ones in run order, then the rest.

    ``ignore_branches`` (``--force``/``--resume``): an existing branch is no blocker."""
    missions = {m.mission.id: m.mission for m in loaded}
    cycle = cycle_members(missions)
    dependents = _dependents_of(cycle, missions)
    chosen = [m for m in loaded if (only is None and m.mission.status != "done")
              or (only is not None and m.mission.id in only)]  # fmt: skip
    pending = dependency_order([m for m in chosen if m.mission.status == "pending"])
    others = sorted(
        (m for m in chosen if m.mission.status != "pending"), key=lambda m: m.mission.id
    )
    items = []
    for item in [*pending, *others]:
        mission = item.mission
        exists = workspace.branch_exists(layout.root, branch_name(mission.id))
        # rounds handed over left their branch: only then is the log read
        handover = _handover(layout, mission.id) if exists and mission.status == "pending" else None
        answered = handover is not None and handover.startswith("answered")
        taken = exists and not ignore_branches and not answered  # an answer continues it
        blockers = blockers_for(mission, missions, cycle, dependents, test_cmd, taken)
        items.append(PlanItem(mission, blockers, handover))
    return items


def _handover(layout: Layout, mission_id: str) -> str | None:
    """The mission's open hand-over as the plan says it (uh_core.harness.answer)."""
    from uh_core.events.answers import authors
    from uh_core.harness.answer import pending

    fold = pending(layout, mission_id)
    if fold.answers:
        who = authors(fold.answers)
        return f"answered by {who}: the next run continues {branch_name(mission_id)}"
    if fold.handover is not None:
        return (
            f"handed over ({fold.handover.code or 'blocked'}): answer it with "
            f'`uh-core harness answer {mission_id} "…"`'
        )
    return None


NO_MISSIONS = """no missions yet: .harness/missions/ holds none. Add one as .harness/missions/<id>/\
mission.yaml (`uh-core schema mission` gives its fields), check it with `uh-core mission validate`,\
 then plan again"""


def render_refusals(refusals: list[Blocker]) -> list[str]:
    """What would refuse ``harness run`` itself (``uh_core.harness.preflight``)."""
    if not refusals:
        return []
    lines = ["`harness run` would refuse to start:"]
    for blocker in refusals:
        lines.append(f"    {blocker.code}: {blocker.message}")
        if blocker.fix:
            lines.append(f"      fix: {blocker.fix}")
    return lines


def render_plan(items: list[PlanItem], missions: int, refusals: list[Blocker] | None = None) -> str:
    """The plan as text; ``missions`` counts every readable mission (done ones too);
    ``refusals`` are the run's own blockers, said first (with nothing to run, not at all)."""
    refusals = refusals or []
    if not missions:
        return NO_MISSIONS
    if not items:
        return f"nothing to plan: every mission is done ({missions} mission{'s' * (missions > 1)})"
    lines = render_refusals(refusals)
    for item in items:
        badge = "READY  " if item.ready else "BLOCKED"
        lines.append(f"[{badge}] {item.mission.id}  {item.mission.display_title}")
        if item.handover is not None:
            lines.append(f"    {item.handover}")
        for blocker in item.blockers:
            lines.append(f"    {blocker.code}: {blocker.message}")
            lines.append(f"      fix: {blocker.fix}")
    ready = sum(1 for item in items if item.ready)
    if refusals:
        many = len(refusals) > 1
        lines.append(
            f"{ready} of {len(items)} mission(s) ready, but `harness run` refuses to start until "
            f"the {len(refusals)} problem{'s' * many} above {'are' if many else 'is'} fixed"
        )
    else:
        lines.append(f"{ready} of {len(items)} mission(s) ready")
    return "\n".join(lines)
