"""Isolation of agent runs: bubblewrap sandboxes (``bwrap``) and, for unconfined runs, a
subreaper that leaves no survivor behind (``reaper``)."""

from uh_core.isolation.bwrap import (
    IsolationMode,
    Resolved,
    bwrap_available,
    find_bwrap,
    probe_bwrap,
    resolve_mode,
    wrap_argv,
)
from uh_core.isolation.reaper import (
    Survivor,
    Survivors,
    become_subreaper,
    children_of,
    is_subreaper,
    reap_survivors,
)

__all__ = [
    "IsolationMode",
    "Resolved",
    "Survivor",
    "Survivors",
    "become_subreaper",
    "bwrap_available",
    "children_of",
    "find_bwrap",
    "is_subreaper",
    "probe_bwrap",
    "reap_survivors",
    "resolve_mode",
    "wrap_argv",
]
