"""``--change PATH``: which of the source's changed paths a decision covers.

A filter is a repository-relative path: a file (exact), a directory (everything below it, with
or without a trailing ``/``), or a glob with the rules of docs/diff.md (``src/**/*.py``,
anchored at the root). An absolute path inside the root is taken relative to it. A filter
that names none of the changed paths is an error that names it: a typo must not shrink a
promotion silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from uh_core.diff.globs import matches
from uh_core.errors import UsageError

_GLOB_CHARS = frozenset("*?[{")


def normalise(spec: str, root: Path) -> str:
    """``spec`` as a root-relative POSIX path (or glob); refuses what cannot name a path."""
    text = spec.strip()
    if not text or "\0" in text or "\n" in text:
        raise UsageError(f"--change {spec!r}: not a path")
    if text.startswith("/"):
        try:
            text = Path(text).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise UsageError(
                f"--change {spec}: outside the root {root}",
                fix="give a path relative to the repository root",
            ) from None
    while text.startswith("./"):
        text = text[2:]
    parts = PurePosixPath(text).parts
    if ".." in parts:
        raise UsageError(f"--change {spec}: '..' is not allowed", fix="give a path in the root")
    return text if text not in ("", ".") else "**"


def covers(spec: str, path: str) -> bool:
    """Whether the filter ``spec`` (normalised) selects the changed ``path``."""
    plain = spec.rstrip("/")
    if path == plain or path.startswith(plain + "/"):
        return True
    return bool(_GLOB_CHARS & set(spec)) and matches(path, [spec])


def select(paths: Sequence[str], specs: Sequence[str], root: Path) -> tuple[list[str], list[str]]:
    """(selected paths, normalised filters). Every filter must select at least one path."""
    if not specs:
        return list(paths), []
    filters = [normalise(spec, root) for spec in specs]
    unused = [
        spec for spec, norm in zip(specs, filters, strict=True)
        if not any(covers(norm, path) for path in paths)
    ]  # fmt: skip
    if unused:
        shown = ", ".join(unused)
        listed = ", ".join(paths[:8]) + (f" and {len(paths) - 8} more" if len(paths) > 8 else "")
        raise UsageError(
            f"--change {shown}: not among the changed paths ({listed or 'none'})",
            fix="name a changed file, a directory holding one, or a glob",
        )
    selected = [path for path in paths if any(covers(norm, path) for norm in filters)]
    return selected, filters
