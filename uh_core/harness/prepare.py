"""``harness run``'s checks, all before anything is written: config and flags, the agent,
isolation, git (base commit, clean tree, ignored paths), the missions and their plan
blockers, the runtime, and (with ``--resume``) what an earlier run left working. A refused
run leaves no trace."""

from __future__ import annotations

from dataclasses import dataclass, field

from uh_core.errors import UsageError
from uh_core.harness import preflight, survivors
from uh_core.harness.agent import AgentSpec
from uh_core.harness.config import Flags, Settings, load_config, resolve
from uh_core.harness.plan import Blocker, build_plan
from uh_core.harness.profiles import by_name, load_profiles
from uh_core.harness.select import Selection, select
from uh_core.isolation import Resolved
from uh_core.layout import Layout
from uh_core.models.harness_config import Profile


@dataclass
class Prepared:
    layout: Layout
    settings: Settings
    spec: AgentSpec
    base_commit: str
    selection: Selection
    blockers: dict[str, list[Blocker]] = field(default_factory=dict)
    profiles: list[Profile] = field(default_factory=list)
    specs: dict[str, AgentSpec] = field(default_factory=dict)  # profile name → its agent
    isolation: Resolved | None = None
    stopped: list[str] = field(default_factory=list)  # survivors --stop-survivors stopped


def prepare(layout: Layout, flags: Flags, *, stop_survivors: bool = False) -> Prepared:
    """Everything that can refuse the run, in the order a user fixes things; writes nothing.
    Last, ``--resume`` refuses while an earlier run's runner or agent still works on its
    missions (``survivors``), unless ``stop_survivors`` stops them first."""
    config = load_config(layout)
    settings = resolve(layout, config, flags)
    if stop_survivors and not settings.resume:
        raise UsageError("--stop-survivors goes with --resume (it stops what an earlier run left)")
    profiles = load_profiles(layout, config)
    named = by_name(profiles, settings.profile) if settings.profile is not None else None
    # the agent, isolation, the repository, a clean tree: `harness plan` lists the same checks
    checked = preflight.require(layout, settings, named)
    isolation, base = checked.isolation, checked.base_commit
    selection = select(layout, settings.requested)
    here = settings.executor != "ray"  # on Ray, each node checks its own runtimes
    if not here:
        from uh_core.distributed.harness import refuse_on_ray

        refuse_on_ray(settings)
    spec, specs = preflight.agents(layout, settings, profiles, here=here)
    plan = build_plan(
        layout,
        selection.loaded,
        settings.test_cmd,
        ignore_branches=settings.force or settings.resume,
        only={m.mission.id for m in selection.missions},
    )
    blockers = {item.mission.id: item.blockers for item in plan}
    if spec is None:  # every mission runs under --profile's agent
        assert named is not None
        spec = specs[named.name]
    prepared = Prepared(
        layout, settings, spec, base, selection, blockers, profiles, specs, isolation
    )
    if settings.resume:
        missions = [m.mission.id for m in selection.missions]
        stopped = survivors.ensure_none(layout, missions, stop_them=stop_survivors)
        prepared.stopped = [s.line() for s in stopped]
    return prepared
