"""``sandbox.promotion_policy``: exactly ``auto-on-verify`` promotes a passing sandbox verify
by itself; any other value, a typo included, means a human decides. A value that looks like a
misspelt ``auto-on-verify`` gets a warning (``mission validate``, ``verify --sandbox``), never
an error: the safe reading of a typo is "a human decides"."""

from __future__ import annotations

import difflib

from uh_core.models.mission import Mission

AUTO_POLICY = "auto-on-verify"
AUTO_APPROVER = "auto-on-verify"


def is_auto(mission: Mission) -> bool:
    return mission.sandbox.promotion_policy == AUTO_POLICY


def policy_typo(mission: Mission) -> str | None:
    """A warning when ``promotion_policy`` looks like a misspelt ``auto-on-verify``."""
    value = mission.sandbox.promotion_policy
    if value is None or value == AUTO_POLICY:
        return None
    folded = value.strip().lower().replace("_", "-").replace(" ", "-")
    if folded != AUTO_POLICY and not difflib.get_close_matches(folded, [AUTO_POLICY], cutoff=0.75):
        return None
    return (
        f"mission {mission.id}: sandbox.promotion_policy {value!r} is not {AUTO_POLICY!r}, so "
        f"nothing is promoted automatically and a human decides (fix: write {AUTO_POLICY} "
        "if you meant it)"
    )
