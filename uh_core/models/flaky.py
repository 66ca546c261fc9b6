"""uh.flaky.v0: ``.harness/flaky.yaml``, the register of criteria whose verdict changed on the
same tree (docs/verification.md, "The flaky register"). While registered a criterion is
``unobserved`` (the mission ``blocked``), never passed; ``uh-core flaky clear ID`` removes it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from uh_core.models.base import Open

FLAKY_SCHEMA = "uh.flaky.v0"


class FlakyEntry(Open):
    id: str  # "<mission>/<criterion>": what `uh-core flaky clear` takes
    mission_id: str
    criterion: str
    registered_at: str
    # how it was seen: "repeat" (verify --repeat), "re-verify" (a verify of the same tree
    # whose verdict differs from the previous one's; in the harness, two rounds on one tree)
    source: str
    runs: list[str] = Field(default_factory=list)  # the verdicts seen, in order
    tree: str | None = None  # the tree both verdicts were about, when known
    evidence: list[str] = Field(default_factory=list)  # verification.yaml files of the runs


class FlakyRegister(Open):
    schema_version: Literal["uh.flaky.v0"] = "uh.flaky.v0"
    entries: list[FlakyEntry] = Field(default_factory=list)
