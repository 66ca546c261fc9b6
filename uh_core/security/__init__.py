"""Guarding the operator's repository: what a run changed outside its sandbox."""

from uh_core.security.change import KINDS, TamperChange
from uh_core.security.tamper import RepoSnapshot, compare, snapshot_repo

__all__ = ["KINDS", "RepoSnapshot", "TamperChange", "compare", "snapshot_repo"]
