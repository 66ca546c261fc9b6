"""What the last ``verify --sandbox`` judged, stamped on the sandbox's index entry.

A promotion needs to know two things about a sandbox: did its last verify pass, and is the
sandbox still what that verify saw. The verdict is the record uh wrote in the operator's
``.harness/sandboxes/<sbx>/``; what it saw is the tree object uh built from the sandbox just
before the checks ran (and the hash of its diff), stamped here under the index's lock and
compared with a fresh snapshot when promoting. Timestamps never decide.
"""

from __future__ import annotations

from uh_core.clock import timestamp
from uh_core.diff.capture import Snapshot
from uh_core.layout import Layout
from uh_core.models.verification import VerificationResult
from uh_core.sandbox.index import locked_index


def record_verify(
    layout: Layout, sandbox_id: str, result: VerificationResult, judged: Snapshot
) -> str:
    """Stamp ``result`` and the snapshot it judged on the sandbox; the diff hash."""
    with locked_index(layout) as index:
        found = index.find(sandbox_id)
        if found is not None:
            found.verify_status = result.status
            found.verify_run_id = result.run_id
            found.verified_diff_hash = judged.diff_hash
            found.verified_tree = judged.tree
            found.verified_at = timestamp()
    return judged.diff_hash
