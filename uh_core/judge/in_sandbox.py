"""Verifying a mission inside a sandbox: the mission as it stands in the main checkout
(never the sandbox's copy, which an agent may have edited), commands run in a pristine,
confined room of the judged tree (``room.py``; never in the sandbox itself),
records kept in the operator's ``.harness/sandboxes/<sbx>/missions/<id>/`` (never inside
the sandbox, where the agent writes).

One snapshot is judged: just before the checks run, uh writes the sandbox as a tree object
(with the operator's git directory) and its diff against the base commit — the TDD
criterion reads that fresh diff, never one captured earlier. The harness gate's own
write-scope and tests stages run on it too (``gate_criteria``): one gate for every route.
The result names that tree, and the sandbox's index entry is stamped with it; a promotion
applies only that tree.
"""

from __future__ import annotations

from uh_core.diff.capture import snapshot_worktree
from uh_core.diff.patch_paths import scan_file
from uh_core.errors import SandboxError
from uh_core.git import common_dir
from uh_core.isolation.bwrap import resolve_mode
from uh_core.judge.room import open_room
from uh_core.judge.sandbox_criteria import gate_criteria
from uh_core.judge.settings import Flags, load_config, resolve
from uh_core.layout import Layout
from uh_core.models.mission import Mission
from uh_core.models.proof import FailToPass
from uh_core.models.verification import Finding, VerificationResult
from uh_core.sandbox.verified import record_verify
from uh_core.sandbox.worktree import entry_path, get_sandbox, sandbox_records
from uh_core.verify.runner import VerifyOptions, verify_mission, write_result
from uh_core.verify.synthetic import synthetic_criteria


def sandbox_layout(layout: Layout, sandbox_id: str) -> Layout:
    return sandbox_records(layout, get_sandbox(layout, sandbox_id))


def verify_in_sandbox(
    layout: Layout, mission: Mission, sandbox_id: str, options: VerifyOptions
) -> VerificationResult:
    entry = get_sandbox(layout, sandbox_id)
    inner = sandbox_records(layout, entry)
    worktree = entry_path(layout, entry)
    if not worktree.is_dir():  # e.g. an entry the TypeScript uh wrote, its worktree removed
        raise SandboxError(
            f"sandbox {entry.id}: its work tree {worktree} does not exist",
            fix=f"discard it: uh-core sandbox discard {entry.id}",
        )
    git_dir = common_dir(layout.root)
    patch = inner.diff_file(mission.id)
    judged = snapshot_worktree(worktree, entry.base_commit, git_dir=git_dir, patch_out=patch)
    touched = scan_file(patch).paths
    settings = resolve(layout, load_config(layout), Flags(jobs=1))  # one sandbox: alone
    isolation = resolve_mode(settings.isolation)  # type: ignore[arg-type]
    proof: list[FailToPass] = []
    gate = gate_criteria(
        layout, inner, mission, entry.base_commit, judged.tree, patch, touched,
        f"gate-{judged.tree[:12]}", git_dir, settings, proof,
    )  # fmt: skip
    options.synthetic = [*synthetic_criteria(inner, mission, patch=patch), *gate]
    options.sandbox_id = sandbox_id
    options.judged_tree, options.judged_diff_hash = judged.tree, judged.diff_hash
    # The checks run the agent's code: in a pristine, confined room of the judged tree.
    with open_room(
        layout, git_dir, judged.tree, isolation,
        label=f"sandbox-{mission.id}", check_env_names=settings.check_env, alone=True,
    ) as room:  # fmt: skip
        options.workdir = room.checkout
        options.launcher, options.base_env = room.launcher(), room.env
        options.network_launcher = lambda: room.launcher(network=True)
        options.isolation = room.note()
        result = verify_mission(inner, mission, options)
    message = room.left_running("the checks")
    if message is not None:  # never green: said in the record, which is written again
        result.findings.append(Finding(severity="error", code="survivors", message=message))
        result.status = "failed"
    if proof:
        result.fail_to_pass = proof[-1]
    if message is not None or proof:
        write_result(inner, result)
    record_verify(layout, sandbox_id, result, judged)
    return result
