"""Atomic promotion: everything is prepared off to the side, a journal says what is about to
land, one ref update lands it, and a checkout that can be repeated brings the work tree.

The order, after the candidate tree and its commit object are made (objects only):

1. ``.harness/promotion.journal.json`` is written whole: the decision, the commit, its
   parent, the branch;
2. ``update-ref HEAD <commit> <parent>`` — the one step that changes history, atomic;
3. ``read-tree -m -u <parent> <commit>`` brings the index and the work tree along (it can
   be repeated: run again from a checkout already at the commit, it changes nothing);
4. the promotion record and its events are written, and the journal is removed.

A promotion killed at any point leaves either nothing (killed before step 2: the branch
never moved, the work tree was never touched) or a journal that the next ``promote`` or
``status`` finishes (steps 3 and 4) and says so. A journal whose branch is neither at its
parent nor at its commit was overtaken by something else: it is reported, never guessed at.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any

from uh_core.errors import PromotionError, UhError
from uh_core.fileio import write_json
from uh_core.git import git_run
from uh_core.layout import Layout
from uh_core.models.promotion import PromotionDecision
from uh_core.yamllimits import read_json

SCHEMA = "uh.promotion-journal.v0"


def journal_file(layout: Layout) -> Path:
    return layout.harness / "promotion.journal.json"


def pause(stage: str) -> None:
    """A test hook: ``UH_TEST_PAUSE_PROMOTION=<stage>`` stops here (a marker file says so)
    so a test can kill the process at that exact step."""
    wanted = os.environ.get("UH_TEST_PAUSE_PROMOTION", "")
    if wanted == stage:
        marker = os.environ.get("UH_TEST_PAUSE_MARKER")
        if marker:
            Path(marker).write_text(stage, encoding="utf-8")
        time.sleep(120)


def begin(layout: Layout, decision: PromotionDecision, parent: str, commit: str) -> None:
    write_json(
        journal_file(layout),
        {
            "schema_version": SCHEMA,
            "parent": parent,
            "commit": commit,
            "decision": decision.model_dump(mode="json"),
        },
    )


def clear(layout: Layout) -> None:
    with contextlib.suppress(FileNotFoundError):
        journal_file(layout).unlink()


def read(layout: Layout) -> dict[str, Any] | None:
    path = journal_file(layout)
    try:
        data = read_json(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise PromotionError(
            f"{layout.rel(path)} is unreadable ({exc}): an interrupted promotion cannot be "
            "finished from it",
            fix="inspect git log and git status, then remove the journal",
        ) from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA:
        raise PromotionError(f"{layout.rel(path)} is not a promotion journal", fix="remove it")
    return data


def checkout(root: Path, parent: str, commit: str) -> None:
    """Index and work tree from ``parent`` to ``commit`` (a two-way merge: repeatable)."""
    found = git_run(root, "read-tree", "-m", "-u", parent, commit)
    if found.returncode != 0:
        lines = found.stderr.decode("utf-8", "replace").strip().splitlines()
        raise PromotionError(
            f"the branch now holds the promotion, but the checkout could not follow: "
            f"{lines[0] if lines else 'read-tree'}",
            fix="run `uh-core promote` or `uh-core status` again to finish it",
        )


def _head(root: Path) -> str | None:
    found = git_run(root, "rev-parse", "--verify", "--quiet", "HEAD")
    return found.stdout.decode().strip() if found.returncode == 0 else None


def _index_tree(root: Path) -> str | None:
    found = git_run(root, "write-tree")
    return found.stdout.decode().strip() if found.returncode == 0 else None


def _tree(root: Path, commit: str) -> str:
    return git_run(root, "rev-parse", f"{commit}^{{tree}}").stdout.decode().strip()


def finish_interrupted(layout: Layout) -> str | None:
    """``recover`` under the promotion lock; what it did, for the CLI to say."""
    from uh_core.promote.record import promotion_lock

    if not journal_file(layout).exists():
        return None
    with promotion_lock(layout):
        return recover(layout)


def recover(layout: Layout) -> str | None:
    """Finish or roll back an interrupted promotion; what was done, or None (no journal).
    Call it under the promotion lock."""
    from uh_core.promote.record import emit_recorded, read_promotion, write_decision

    data = read(layout)
    if data is None:
        return None
    parent, commit = str(data["parent"]), str(data["commit"])
    decision = PromotionDecision.model_validate(data["decision"])
    root = layout.root
    head = _head(root)
    what = f"the interrupted promotion of {decision.mission_id} ({commit[:12]})"
    if head == parent:  # the ref never moved: nothing else was touched either
        clear(layout)
        return f"rolled back {what}: the branch had not moved, nothing had changed"
    if head != commit:
        raise PromotionError(
            f"{what} cannot be finished: HEAD is at {str(head)[:12]}, neither its parent "
            f"{parent[:12]} nor the promotion",
            fix=f"inspect git log, then remove {layout.rel(journal_file(layout))}",
        )
    index = _index_tree(root)
    if index == _tree(root, parent):
        checkout(root, parent, commit)
    elif index != _tree(root, commit):
        raise PromotionError(
            f"{what}: the branch holds it but the checkout has other changes",
            fix=f"git status; then git reset --keep HEAD, and remove "
            f"{layout.rel(journal_file(layout))}",
        )
    try:
        previous = read_promotion(layout, decision.mission_id)
        if previous is None or previous.audit_event_id != decision.audit_event_id:
            emit_recorded(layout, write_decision(layout, decision, previous))
    except UhError as exc:
        raise PromotionError(f"{what}: its record could not be written: {exc.one_line()}") from None
    clear(layout)
    return f"finished {what}: the branch, the checkout and the record now agree"
