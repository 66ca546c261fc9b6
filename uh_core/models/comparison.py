"""runtime-comparison.json (contract §6)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pydantic
from pydantic import Field

from uh_core.errors import ValidationError
from uh_core.models.base import Plain
from uh_core.models.usage import TokenUsage


class RuntimeRow(Plain):
    runtime: str
    # no_change: exited well with an empty diff (never grouped, never agreeing)
    # rate_limited: the provider refused it; shown apart from failed, never grouped
    status: Literal["succeeded", "no_change", "failed", "blocked", "error", "rate_limited"]
    exit_code: int | None = None
    duration_ms: int = 0
    diff_hash: str | None = None
    sandbox: str | None = None
    touched_paths: list[str] = Field(default_factory=list)
    final_message: str = ""
    error: str | None = None
    isolation: str | None = None  # how the agent ran: "bwrap" or "none"
    isolation_note: str | None = None
    tampered: list[str] = Field(default_factory=list)  # changes to the operator's repository
    # what its CLI reported (none: it reported nothing), per model, and summed
    usage: list[TokenUsage] = Field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0


class DiffGroup(Plain):
    diff_hash: str
    runtimes: list[str]


class ConsensusHunk(Plain):
    file: str
    at: int  # the base's line where its first maker put it (0: a whole file)
    changed: int  # lines removed and added
    runtimes: list[str]


class Consensus(Plain):
    """The hunks most runtimes made, applied to the base in a sandbox of their own and
    verified like any runtime's result (uh_core/runall/consensus.py)."""

    # verified: applied and passed; failed: applied, verification not passed; conflict: does
    # not apply; empty: no hunk reached agree_min; not_built: nothing to combine (why: detail)
    status: Literal["verified", "failed", "conflict", "empty", "not_built", "error"]
    detail: str = ""
    agree_min: int = 0
    considered: list[str] = Field(default_factory=list)  # the runtimes that succeeded
    hunks: list[ConsensusHunk] = Field(default_factory=list)  # made by >= agree_min
    disputed: list[ConsensusHunk] = Field(default_factory=list)  # made by fewer
    patch: str | None = None  # .harness/missions/<id>/runs/runtime-consensus.patch
    sandbox: str | None = None
    verification: str | None = None  # the consensus sandbox's verify: passed | failed | …
    duration_ms: int = 0  # building it (reading the diffs, choosing, writing the patch)
    verify_ms: int = 0

    def line(self) -> str:
        """One line: ``consensus: VERIFIED: 3 hunk(s) made by >= 2 of 3, 1 disputed; …``."""
        if self.status == "not_built":
            return f"consensus: not built: {self.detail}"
        counted = (
            f"{len(self.hunks)} hunk(s) made by >= {self.agree_min} of "
            f"{len(self.considered)}, {len(self.disputed)} disputed"
        )
        return f"consensus: {self.status.upper()}: {counted}; {self.detail}"


class Comparison(Plain):
    schema_version: Literal["uh.runtime-comparison.v0"] = "uh.runtime-comparison.v0"
    mission_id: str
    status: Literal["agreement", "divergent", "failed"]
    base_commit: str | None = None
    created_at: str | None = None
    runtimes: list[RuntimeRow] = Field(default_factory=list)
    groups: list[DiffGroup] = Field(default_factory=list)
    agreement_runtimes: list[str] = Field(default_factory=list)
    divergent_runtimes: list[str] = Field(default_factory=list)
    failed_runtimes: list[str] = Field(default_factory=list)
    rate_limited_runtimes: list[str] = Field(default_factory=list)  # also in failed_runtimes
    findings: list[str] = Field(default_factory=list)
    interrupted: bool = False
    consensus: Consensus | None = None


def read_comparison(path: Path, display: str | None = None) -> Comparison:
    """``runtime-comparison.json`` through the bounded loader (``uh_core.yamllimits``): a
    file over the caps, bad JSON or another shape is a ``ValidationError``, one line naming
    the file (``display``); a missing file is ``FileNotFoundError``."""
    from uh_core.shown import clip
    from uh_core.yamllimits import YamlLimitError, read_json

    shown = display or str(path)
    try:
        data = read_json(path)
    except FileNotFoundError:
        raise
    except YamlLimitError as exc:
        raise ValidationError([f"{shown}: (document): refused: {exc}"]) from None
    except UnicodeDecodeError as exc:
        raise ValidationError([f"{shown}: byte {exc.start}: not UTF-8 text"]) from None
    except ValueError as exc:  # bad JSON
        raise ValidationError([f"{shown}: (document): not JSON: {clip(str(exc))}"]) from None
    except OSError as exc:
        raise ValidationError([f"{shown}: cannot read: {exc.strerror}"]) from None
    try:
        return Comparison.model_validate(data)
    except pydantic.ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(document)"
        raise ValidationError([f"{shown}: {clip(where)}: {clip(first['msg'])}"]) from None
