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
