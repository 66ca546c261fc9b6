"""The next step after ``uh-core init`` and ``uh-core mission new``: what to commit before
``harness run`` (which branches from HEAD and refuses a main checkout with uncommitted
changes), and the commands that come after."""

from __future__ import annotations

from uh_core.git import is_repository, run_git
from uh_core.layout import Layout


def _uncommitted(layout: Layout, rel: str) -> bool:
    found = run_git(
        ["status", "--porcelain=v1", "--untracked-files=all", "--", rel],
        cwd=layout.root,
        timeout=30,
    )
    return found.returncode != 0 or bool(found.stdout.strip())


def _commit(layout: Layout, rel: str, message: str) -> list[str]:
    """How to commit ``rel`` (nothing when it is committed already)."""
    if not is_repository(layout.root):
        return [
            f"git init && git add {rel} && git commit -m {message!r}"
            "   (the harness works on branches of a git repository)"
        ]
    if not _uncommitted(layout, rel):
        return []
    return [
        f"git add {rel} && git commit -m {message!r}"
        "   (`harness run` branches from HEAD and refuses uncommitted changes)"
    ]


def after_init(layout: Layout) -> list[str]:
    harness = layout.rel(layout.harness)
    return [
        *_commit(layout, f"{harness}/", "uh: init"),
        "uh-core mission new ID --title TITLE --criterion 'DESCRIPTION::CHECK COMMAND'",
    ]


def after_mission_new(layout: Layout, mission_id: str) -> list[str]:
    harness = layout.rel(layout.harness)
    return [
        *_commit(layout, f"{harness}/", f"mission {mission_id}"),
        f"uh-core verify {mission_id}   (its criteria on the current tree)",
        f"uh-core harness plan, then uh-core harness run --req {mission_id}",
    ]


def render(steps: list[str]) -> list[str]:
    return [f"next: {steps[0]}", *(f"      {step}" for step in steps[1:])] if steps else []
