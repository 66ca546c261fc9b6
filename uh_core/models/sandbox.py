"""uh.sandboxes-index.v0 (``.harness/sandboxes/index.yaml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from uh_core.models.base import Open


class SandboxEntry(Open):
    id: str
    mission_id: str
    runtime: str | None = None
    kind: Literal["runtime", "harness"] = "runtime"
    backend: str = "git-worktree"
    base_commit: str
    branch: str | None = None
    worktree: str  # the sandbox's folder (absolute; an older uh wrote it relative to the root)
    created_at: str
    status: str = "active"
    # The last ``verify --sandbox`` of it (uh_core.sandbox.verified): its verdict and the hash
    # of the diff it judged, so a promotion knows whether the worktree changed since.
    verify_status: str | None = None
    verify_run_id: str | None = None
    verified_diff_hash: str | None = None
    verified_tree: str | None = None  # the tree object that verify judged
    verified_at: str | None = None


class SandboxIndex(Open):
    schema_version: Literal["uh.sandboxes-index.v0"] = "uh.sandboxes-index.v0"
    sandboxes: list[SandboxEntry] = Field(default_factory=list)

    def find(self, sandbox_id: str) -> SandboxEntry | None:
        return next((s for s in self.sandboxes if s.id == sandbox_id), None)


class HumanEdit(Open):
    """What a human changed in a sandbox's tree (``uh-core sandbox shell``), kept apart from
    what its agent changed: the trees before and after (objects in the operator's store),
    the paths and line counts between them, and that diff (``patch``, under the sandbox's
    records)."""

    at: str
    by: str
    before_tree: str
    after_tree: str
    files: list[str] = Field(default_factory=list)
    added: int = 0
    removed: int = 0
    patch: str = ""  # relative to the project root
    command: str = ""  # the shell, or the command it ran

    @property
    def lines(self) -> int:
        return self.added + self.removed


class HumanEdits(Open):
    """``.harness/sandboxes/<id>/human.json``: every human edit of one sandbox, in order."""

    schema_version: Literal["uh.human-edits.v0"] = "uh.human-edits.v0"
    sandbox_id: str
    edits: list[HumanEdit] = Field(default_factory=list)

    @property
    def lines(self) -> int:
        return sum(edit.lines for edit in self.edits)
