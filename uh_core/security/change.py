"""One difference between two repository snapshots, and its human line."""

from __future__ import annotations

from dataclasses import dataclass

from uh_core.security.files import kind_of, parse_file

KINDS = (
    "head", "ref", "hook", "config", "global git config", "git-file", "worktree", "index",
    "harness-file",
)  # fmt: skip
_SHORT = 8


@dataclass(frozen=True)
class TamperChange:
    """``kind`` is one of ``KINDS``; ``name`` what changed (a ref, a path relative to the
    root, or an absolute path outside it); ``before``/``after`` its value on each side,
    None where it did not exist (or, for ``worktree``, where git status did not list it)."""

    kind: str
    name: str
    before: str | None
    after: str | None

    def describe(self) -> str:
        """One human line: ``ref refs/heads/main moved 1a2b3c4d → 9f8e7d6c``."""
        return f"{self.kind} {self.name} {_what(self)}"


def short(value: str | None) -> str:
    """A value with its leading object id cut to 8 characters."""
    if value is None:
        return "none"
    first, _, rest = value.partition(" ")
    if len(first) >= 40 and all(c in "0123456789abcdef" for c in first):
        first = first[:_SHORT]
    return f"{first} {rest}" if rest else first


def _what(change: TamperChange) -> str:
    before, after = change.before, change.after
    if change.kind == "head":
        return _head(before or "absent absent", after or "absent absent")
    if change.kind == "index":
        return "changed (what is staged)"
    if change.kind == "worktree":
        return _worktree(before, after)
    if change.kind == "ref":
        return _ref(before, after)
    if before is None:
        kind = kind_of(after or "")
        return "created" if kind == "file" else f"created ({short(after)})"
    if after is None:
        return "deleted"
    return _file(change.name, before, after)


def _ref(before: str | None, after: str | None) -> str:
    if before is None:
        return f"created at {short(after)}"
    if after is None:
        return f"deleted (was {short(before)})"
    return f"moved {short(before)} → {short(after)}"


def _head(before: str, after: str) -> str:
    ref_b, _, commit_b = before.partition(" ")
    ref_a, _, commit_a = after.partition(" ")
    if ref_b != ref_a:
        return f"switched {ref_b} ({short(commit_b)}) → {ref_a} ({short(commit_a)})"
    return f"moved {short(commit_b)} → {short(commit_a)}"


def _worktree(before: str | None, after: str | None) -> str:
    if after is None:
        return "deleted" if (before or "").startswith("?") else "now unmodified"
    if after.endswith("| absent"):
        return "deleted"
    if before is None and after.startswith("?"):
        return "created"
    return "modified"


def _file(name: str, before: str, after: str) -> str:
    old, new = parse_file(before), parse_file(after)
    if old is None or new is None:
        return f"changed ({short(before)} → {short(after)})"
    if old.sha256 == new.sha256:
        return f"mode {old.perm:o} → {new.perm:o}"
    if name.endswith(".ndjson"):
        return "truncated" if new.size < old.size else "rewritten (not an append)"
    return "changed"
