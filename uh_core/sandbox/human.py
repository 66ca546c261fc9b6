"""A human in a sandbox: ``uh-core sandbox shell SBX`` — the operator's shell in the sandbox's
tree, confined as its agent is, and what the human changed recorded as a change of its own.

Before the shell starts and after it ends, the tree is written as a tree object (by content,
untracked files included, into the operator's object store: ``snapshot_worktree``, as the
gate does). When the two differ, that diff is the human's: written to
``.harness/sandboxes/<id>/human/<n>.patch`` with its paths and line counts, appended to
``.harness/sandboxes/<id>/human.json`` (``HumanEdits``) and said in the mission's log
(``sandbox.human.changed``). Those records are the operator's: outside every sandbox's tree
and outside the agent's output folder, so no agent writes them. Readers (the harness ledger,
the promotion commit's ``Uh-Human-Lines``) read them, never the gate.

The shell runs in the foreground, its terminal the operator's (Ctrl-C and job control are
the shell's own), under bwrap when isolation is on: the sandbox's tree is the only writable
path, its own PID namespace ends whatever it left when it exits.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from uh_core.clock import timestamp
from uh_core.diff.capture import snapshot_worktree
from uh_core.errors import SandboxError, UhError
from uh_core.events.writer import EventLog
from uh_core.fileio import write_json
from uh_core.git import common_dir, git
from uh_core.isolation.bwrap import Resolved, wrap_argv
from uh_core.layout import Layout
from uh_core.models.events import SandboxHumanChanged
from uh_core.models.sandbox import HumanEdit, HumanEdits, SandboxEntry
from uh_core.sandbox.worktree import entry_path
from uh_core.yamllimits import read_json

_FLAGS = ("--binary", "--no-color", "--no-ext-diff", "--no-textconv")  # as the gate's diff


@dataclass(frozen=True)
class ShellOutcome:
    exit_code: int
    edit: HumanEdit | None  # None: the tree is as it was


def edits_path(layout: Layout, sandbox_id: str) -> Path:
    return layout.sandbox_evidence(sandbox_id) / "human.json"


def read_edits(layout: Layout, sandbox_id: str) -> HumanEdits:
    """Every human edit recorded for the sandbox (none: an empty record)."""
    path = edits_path(layout, sandbox_id)
    if not path.is_file():
        return HumanEdits(sandbox_id=sandbox_id)
    try:
        return HumanEdits.model_validate(read_json(path))
    except (OSError, ValueError) as exc:
        raise SandboxError(
            f"{layout.rel(path)}: not a readable record of human edits: {exc}",
            fix="restore it from a backup, or move it aside (the edits it listed are "
            "forgotten, not undone)",
        ) from None


def shell(
    layout: Layout, entry: SandboxEntry, argv: list[str], by: str, isolation: Resolved
) -> ShellOutcome:
    """``argv`` (the operator's shell, or a command) in the sandbox's tree; its change, if any,
    recorded as the human's."""
    tree = entry_path(layout, entry)
    if not tree.is_dir():
        raise SandboxError(
            f"sandbox {entry.id}: its tree {tree} is gone",
            fix=f"`uh-core sandbox discard {entry.id}`, then run the mission again",
        )
    store = common_dir(layout.root)
    edits = read_edits(layout, entry.id)  # a broken record refuses before anything runs
    before = snapshot_worktree(tree, entry.base_commit, git_dir=store).tree
    command = argv
    if isolation.mode == "bwrap":
        command = wrap_argv(argv, writable=[tree], readable=[], cwd=tree)
    env = {**os.environ, "UH_SANDBOX": str(tree), "UH_SANDBOX_ID": entry.id}
    done = subprocess.run(command, cwd=tree, env=env, check=False)  # the foreground: a TTY's
    after = snapshot_worktree(tree, entry.base_commit, git_dir=store).tree
    if after == before:
        return ShellOutcome(done.returncode, None)
    edit = _record(layout, entry, edits, before, after, by, " ".join(argv))
    return ShellOutcome(done.returncode, edit)


def _record(
    layout: Layout,
    entry: SandboxEntry,
    edits: HumanEdits,
    before: str,
    after: str,
    by: str,
    command: str,
) -> HumanEdit:
    store = common_dir(layout.root)
    n = len(edits.edits) + 1
    patch = layout.sandbox_evidence(entry.id) / "human" / f"{n}.patch"
    patch.parent.mkdir(parents=True, exist_ok=True)
    added = removed = 0
    files: list[str] = []
    try:  # the two trees are the record; the patch and counts are read from them
        text = git(layout.root, "diff", *_FLAGS, before, after, git_dir=store)
        patch.write_text(text, encoding="utf-8")
        counts = git(layout.root, "diff", "--numstat", "-z", *_FLAGS, before, after, git_dir=store)
    except (UhError, OSError) as exc:  # the edit is kept whatever: its trees say it all
        patch.write_text(f"# the diff could not be written: {exc}\n", encoding="utf-8")
        counts = ""
    for line in counts.split("\0"):
        parts = line.split("\t", 2)
        if len(parts) == 3:
            added += int(parts[0]) if parts[0].isdigit() else 0
            removed += int(parts[1]) if parts[1].isdigit() else 0
            files.append(parts[2])
    edit = HumanEdit(
        at=timestamp(), by=by, before_tree=before, after_tree=after, files=files,
        added=added, removed=removed, patch=layout.rel(patch), command=command,
    )  # fmt: skip
    edits.edits.append(edit)
    write_json(edits_path(layout, entry.id), edits.model_dump(mode="json"))
    EventLog(layout.mission_events(entry.mission_id), mission_id=entry.mission_id).emit(
        SandboxHumanChanged(
            sandbox_id=entry.id, by=by, files=files, added=added, removed=removed,
            patch=edit.patch,
        )
    )  # fmt: skip
    return edit


def human_lines(layout: Layout, sandbox_id: str | None) -> int:
    """Lines a human changed in the sandbox (0: none, or no record that reads)."""
    if sandbox_id is None:
        return 0
    try:
        return read_edits(layout, sandbox_id).lines
    except SandboxError:
        return 0
