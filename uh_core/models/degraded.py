"""``degraded:`` on an acceptance criterion: its intended evidence cannot be obtained here,
and what substitutes for it (docs/verification.md, "Degraded evidence").

The criterion's ``check_command`` runs the substitute, and its verdict is the criterion's;
the forfeited part is a named residual gap with its owner, shown beside the verdict in every
summary — never a plain pass.
"""

from __future__ import annotations

from pydantic import Field

from uh_core.models.base import Strict


class Degraded(Strict):
    forfeited: str = Field(min_length=1)  # the evidence this criterion cannot get here
    substitute: str = Field(min_length=1)  # what its check_command checks instead
    residual_owner: str = Field(min_length=1)  # who answers for the forfeited part
    cadence: str | None = None  # when that owner checks it (e.g. "before each release")

    def gap(self) -> str:
        """The residual gap as one line."""
        when = f", {self.cadence}" if self.cadence else ""
        return (
            f"residual gap: {self.forfeited} (owner {self.residual_owner}{when}); "
            f"substitute: {self.substitute}"
        )
