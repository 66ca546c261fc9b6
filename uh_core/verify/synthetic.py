"""Harness-made criteria appended after the declared ones (the TDD gate lives here)."""

from __future__ import annotations

from uh_core.layout import Layout
from uh_core.models.mission import Mission
from uh_core.verify.runner import SyntheticCriterion


def synthetic_criteria(layout: Layout, mission: Mission) -> list[SyntheticCriterion]:
    return []
