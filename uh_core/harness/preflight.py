"""What ``harness run`` checks before it starts, one function per precondition, shared by the
run (which stops at the first one failing) and ``harness plan`` (which lists every one failing
as a blocker of the run, with the same words and fix): the agent, isolation, the repository
and its base commit, a clean main checkout, the generated paths ignored, the agents' runtimes.

Per-mission blockers (dependencies, an existing branch, nothing that can fail) are
``uh_core.harness.plan``'s; they skip a mission, these refuse the whole run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uh_core.errors import UhError
from uh_core.harness import workspace
from uh_core.harness.agent import AgentSpec, agent_spec
from uh_core.harness.config import Settings, require_agent
from uh_core.harness.plan import Blocker
from uh_core.harness.profiles import apply
from uh_core.isolation import Resolved
from uh_core.isolation.command import command_binds
from uh_core.layout import Layout
from uh_core.models.harness_config import Profile
from uh_core.security import guard


def blocker_of(code: str, exc: UhError) -> Blocker:
    return Blocker(code, " ".join(exc.message.split()), exc.fix or "")


@dataclass
class Checked:
    """What the run's checks found, for the run to use."""

    isolation: Resolved
    base_commit: str


def _checks(
    layout: Layout, settings: Settings, named: Profile | None
) -> list[tuple[str, Callable[[], Any]]]:
    """The run's checks in the order a user fixes things: (blocker code, check)."""
    return [
        ("no_agent", lambda: require_agent(apply(settings, named))),
        # --isolation bwrap that cannot work here
        ("isolation_unavailable", lambda: guard.resolve(settings.isolation)),
        # an agent command under /tmp that cannot be followed into the sandbox
        ("agent_hidden", lambda: confined_command(settings)),
        ("no_base_commit", lambda: workspace.base_commit(layout)),
        ("uncommitted_changes", lambda: workspace.require_clean(layout)),
        ("generated_not_ignored", lambda: workspace.require_ignored(layout)),
    ]


def confined_command(settings: Settings) -> None:
    """Under bubblewrap, an ``--agent`` command installed under ``/tmp`` (private inside) must
    lead to a file the sandbox can be given; it is run as ``/bin/sh -c COMMAND``."""
    if settings.agent is None:
        return
    try:
        confined = guard.resolve(settings.isolation).mode == "bwrap"
    except UhError:  # isolation_unavailable says it
        return
    if confined:
        command_binds(["/bin/sh", "-c", settings.agent])
    command_binds(["/bin/sh", "-c", settings.agent])


# Checks that cannot run without the one before them (no repository: no status to read).
_NEEDS_REPOSITORY = frozenset({"uncommitted_changes", "generated_not_ignored"})


def require(layout: Layout, settings: Settings, named: Profile | None) -> Checked:
    """``harness run``: every check in order; the first failing one raises its error."""
    found = {code: check() for code, check in _checks(layout, settings, named)}
    return Checked(isolation=found["isolation_unavailable"], base_commit=found["no_base_commit"])


def agents(
    layout: Layout,
    settings: Settings,
    profiles: list[Profile],
    *,
    here: bool = True,
) -> tuple[AgentSpec | None, dict[str, AgentSpec]]:
    """The run's agent (None: every mission runs under ``--profile``'s) and each profile's;
    a runtime that cannot run here (or an agent that cannot start confined) raises."""
    spec = (
        agent_spec(layout, settings.agent, settings.runtime, settings, here=here)
        if (settings.agent is not None or settings.runtime is not None)
        else None
    )
    specs = {
        p.name: agent_spec(layout, p.agent, p.runtime, settings, here=here)
        for p in profiles
        if p.agent is not None or p.runtime is not None
    }
    return spec, specs


def blockers(
    layout: Layout, settings: Settings, named: Profile | None, profiles: list[Profile]
) -> list[Blocker]:
    """``harness plan``: every check the run would refuse for, each as a blocker."""
    found: list[Blocker] = []
    for code, check in _checks(layout, settings, named):
        if code in _NEEDS_REPOSITORY and any(b.code == "no_base_commit" for b in found):
            continue
        try:
            check()
        except UhError as exc:
            found.append(blocker_of(code, exc))
    if not any(b.code == "no_agent" for b in found):
        try:
            agents(layout, settings, profiles)
        except UhError as exc:
            found.append(blocker_of("agent_unavailable", exc))
    return found
