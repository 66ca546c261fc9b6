"""What the last ``verify --sandbox`` judged, stamped on the sandbox's index entry.

A promotion needs to know two things about a sandbox: did its last verify pass, and is the
worktree still what that verify saw. The first is the worktree's ``verification.yaml``; the
second is a content hash (the same ``diff_hash`` as ``mission run``'s) taken right after the
verify, compared with the hash when promoting. Timestamps never decide.
"""

from __future__ import annotations

from uh_core.clock import timestamp
from uh_core.diff.capture import snapshot_worktree
from uh_core.errors import UhError
from uh_core.layout import Layout
from uh_core.models.verification import VerificationResult
from uh_core.sandbox.index import locked_index
from uh_core.sandbox.worktree import get_sandbox


def record_verify(layout: Layout, sandbox_id: str, result: VerificationResult) -> str | None:
    """Stamp ``result`` and the worktree's current diff hash on the sandbox; the hash.

    A worktree whose diff cannot be taken gets the verdict without a hash (a promotion then
    treats its freshness as unknown)."""
    entry = get_sandbox(layout, sandbox_id)
    try:
        digest: str | None = snapshot_worktree(
            layout.root / entry.worktree, entry.base_commit
        ).diff_hash
    except UhError:
        digest = None
    with locked_index(layout) as index:
        found = index.find(sandbox_id)
        if found is not None:
            found.verify_status = result.status
            found.verify_run_id = result.run_id
            found.verified_diff_hash = digest
            found.verified_at = timestamp()
    return digest
