"""Per-file line statistics of a patch, for the dashboard's diff view (uses unidiff).

unidiff parses every hunk into objects, so it is the right tool for a diff a person will
look at, and the wrong one for classifying a 200 MB patch (see benchmarks/diff_classify.py:
the streaming reader in :mod:`uh_core.diff.patch_paths` is well over ten times faster).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from uh_core.diff.names import DEV_NULL, c_unquote, decode_path
from uh_core.errors import DiffError


@dataclass(frozen=True)
class FileStat:
    path: str  # the file after the change (before it, for a deletion)
    added: int
    removed: int
    old_path: str | None = None  # set for renames and copies
    binary: bool = False


def _name(raw: str, prefix: str) -> str:
    data = raw.encode("utf-8", "surrogateescape")
    if data.startswith(b'"'):
        with contextlib.suppress(ValueError):
            data = c_unquote(data)[0]
    if data != DEV_NULL and data.startswith(prefix.encode()):
        data = data[len(prefix) :]
    return decode_path(data)


def hunk_stats(patch_text: str | bytes) -> list[FileStat]:
    """Lines added and removed per file, in patch order. Raises DiffError if unreadable."""
    if isinstance(patch_text, bytes):
        patch_text = patch_text.decode("utf-8", "surrogateescape")
    try:
        patch = PatchSet(patch_text, metadata_only=True)
    except UnidiffParseError as exc:
        raise DiffError(f"cannot read the patch: {exc}") from None
    stats: list[FileStat] = []
    for item in patch:
        source = _name(item.source_file or "", "a/")
        target = _name(item.target_file or "", "b/")
        deleted = target == "/dev/null"
        path = source if deleted else target
        old = source if source not in (path, "/dev/null") else None
        stats.append(
            FileStat(
                path=path,
                added=int(item.added),
                removed=int(item.removed),
                old_path=old,
                binary=bool(item.is_binary_file),
            )
        )
    return stats
