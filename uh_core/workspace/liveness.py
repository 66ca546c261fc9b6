"""Is a running state's owner still alive? Asked where the workspace builds its view.

The folds (``uh_core.events.fold``) stay pure: each running state carries the owner its
``*.started`` event recorded (pid, start time, host) and when its run was last seen (the
timestamp of its last event). Here a ``Probe`` (one per refresh: ``/proc`` is read once per
process however many states name it) decides, per state:

- the owner is gone (no such pid, a zombie, or a pid now held by a process with another
  start time) on this host → ``Lost``: the state reads ``interrupted``, last seen at ``seen``;
- the owner was recorded on another host → still running, shown with that host's name;
- no owner recorded (older logs, other writers) → as the events say.

A harness agent's ``runtime.started`` carries no owner of its own: its run id is the harness
run's, so it belongs to that run's owner.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from uh_core.events.fold import MissionFold
from uh_core.events.observe import MissionState
from uh_core.models.events import Owner
from uh_core.procid import Probe, State


@dataclass(frozen=True)
class Lost:
    """A running state whose owner is gone."""

    owner: Owner
    seen: str  # the timestamp of its run's last event: when it was last seen alive

    def why(self, what: str) -> str:
        seen = f"; last seen {self.seen}" if self.seen else ""
        return f"{what} interrupted: its process (pid {self.owner.pid}) is gone{seen}"


def lost(probe: Probe, owner: Owner | None, seen: str) -> Lost | None:
    """``Lost`` when ``owner`` is recorded and gone (on this host); else None."""
    return Lost(owner, seen) if owner is not None and _state(probe, owner) == "gone" else None


def elsewhere(probe: Probe, owner: Owner | None) -> str | None:
    """The other host ``owner`` runs on (nothing here can check it), or None."""
    if owner is None or not owner.host:
        return None
    return owner.host if _state(probe, owner) == "elsewhere" else None


def _state(probe: Probe, owner: Owner) -> State:
    return probe.state(owner.pid, owner.start_time, owner.host)


def verify_lost(probe: Probe, state: MissionState) -> Lost | None:
    """The running verify of ``state`` whose process is gone, or None."""
    return lost(probe, state.verify_owner, state.verify_seen) if state.running else None


@dataclass(frozen=True)
class FoldLiveness:
    """What in one mission's fold runs without its owner, and where owners are elsewhere."""

    verify: Lost | None = None
    runtimes: dict[str, Lost] = field(default_factory=dict)
    harness: Lost | None = None
    hosts: dict[str, str] = field(default_factory=dict)  # verify | run NAME | harness → host

    @property
    def lines(self) -> tuple[str, ...]:
        """One line per interrupted state, for a reader to show."""
        found = []
        if self.verify is not None:
            found.append(self.verify.why("verify"))
        found += [gone.why(f"run {name}") for name, gone in sorted(self.runtimes.items())]
        if self.harness is not None:
            found.append(self.harness.why("harness run"))
        return tuple(found)


def check(probe: Probe, fold: MissionFold) -> FoldLiveness:
    """Only running states are checked: a mission with nothing running costs no ``/proc``."""
    hosts: dict[str, str] = {}
    verify = None
    if fold.verify.running:
        verify = verify_lost(probe, fold.verify)
        _host(probe, hosts, "verify", fold.verify.verify_owner)
    harness = fold.harness
    harness_gone = None
    if harness is not None and harness.running:
        harness_gone = lost(probe, harness.owner, harness.seen)
        _host(probe, hosts, "harness", harness.owner)
    runtimes: dict[str, Lost] = {}
    for name, run in fold.runtimes.items():
        if not run.running:
            continue
        owner, seen = run.owner, run.seen
        if owner is None and harness is not None and run.run_id and run.run_id == harness.run_id:
            owner, seen = harness.owner, max(run.seen, harness.seen)  # the harness's agent
        gone = lost(probe, owner, seen)
        if gone is not None:
            runtimes[name] = gone
        _host(probe, hosts, f"run {name}", owner)
    return FoldLiveness(verify, runtimes, harness_gone, hosts)


def _host(probe: Probe, hosts: dict[str, str], what: str, owner: Owner | None) -> None:
    other = elsewhere(probe, owner)
    if other is not None:
        hosts[what] = other
