"""Which paths one file section of a diff touches.

A *section* is one file's part of a diff: a ``diff --git`` block, a plain ``---``/``+++``
pair, a ``Binary files … differ`` line or a combined (``diff --cc``) block. The scanner in
:mod:`uh_core.diff.patch_paths` collects the raw header fields; this module turns them
into repository-relative names, learning the prefixes a patch uses as it goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from uh_core.diff.names import (
    DEV_NULL,
    c_unquote,
    common_name,
    header_name,
    split_git_line,
    strip_prefix,
    tidy,
    unquote_whole,
)


@dataclass
class GitSection:
    """Header fields of one ``diff --git`` section, as raw bytes."""

    rest: bytes  # what follows "diff --git "
    at: int  # byte offset of the "diff --git" line
    line: int | None = None  # its number, once known (set before its buffer goes away)
    minus: bytes | None = None  # name on the --- line (prefixed, unquoted)
    plus: bytes | None = None
    renamed: list[bytes] = field(default_factory=list)  # rename/copy from and to


class Prefixes:
    """Prefixes learned from sections whose names are unambiguous.

    ``--src-prefix=p/ --dst-prefix=p/`` writes ``diff --git p/x p/x``, which reads the same
    as ``--no-prefix`` for a file ``p/x``; a rename elsewhere in the patch tells them apart.
    """

    def __init__(self) -> None:
        self.git: tuple[bytes, bytes] | None = None
        self.plain: tuple[bytes, bytes] | None = None

    def learn_git(self, old: bytes, new: bytes, name_old: bytes, name_new: bytes) -> None:
        if self.git is None and old.endswith(name_old) and new.endswith(name_new):
            p1, p2 = old[: len(old) - len(name_old)], new[: len(new) - len(name_new)]
            if _is_prefix(p1) and _is_prefix(p2):
                self.git = (p1, p2)


def _is_prefix(prefix: bytes) -> bool:
    return not prefix or prefix.endswith(b"/")


def git_section_paths(section: GitSection, prefixes: Prefixes) -> tuple[list[bytes], bool]:
    """Touched names of a ``diff --git`` section, and whether the name may still hold a prefix.

    ``diff --git p/x p/x`` names ``p/x`` with ``--no-prefix`` but ``x`` with
    ``--src-prefix=p/ --dst-prefix=p/``; only a rename elsewhere in the patch tells, so such
    a name is flagged and settled when the patch ends. Raises ValueError when unreadable.
    """
    if section.minus == DEV_NULL and section.plus == DEV_NULL:
        # Both sides /dev/null name no file (as in a plain section, and as the TypeScript uh
        # reads it); `git apply` would strip one component and write "dev/null".
        return [], False
    if section.renamed:
        if len(section.renamed) == 2:
            _learn_from_rename(section, prefixes)
        return [tidy(name) for name in section.renamed], False
    old, new = split_git_line(section.rest, section.minus, section.plus)
    known = prefixes.git
    if known is not None and old.startswith(known[0]) and new.startswith(known[1]):
        name_old, name_new = old[len(known[0]) :], new[len(known[1]) :]
        if name_old == name_new:
            return [tidy(name_old)], False
    name = common_name(old, new)
    if name is None:
        raise ValueError("the two names in 'diff --git' differ but there is no rename header")
    if name != old:
        prefixes.learn_git(old, new, name, name)
        return [tidy(name)], False
    return [tidy(name)], True


def _learn_from_rename(section: GitSection, prefixes: Prefixes) -> None:
    if prefixes.git is not None:
        return
    source, target = section.renamed
    try:
        old, new = split_git_line(section.rest, None, None)
    except ValueError:
        old = new = b""
    if old.endswith(source) and new.endswith(target):
        prefixes.learn_git(old, new, source, target)
        return
    # Unquoted names with spaces: find the split whose halves end with the two names.
    rest = section.rest
    space = rest.find(b" ")
    while space >= 0:
        old, new = rest[:space], rest[space + 1 :]
        if old.endswith(source) and new.endswith(target):
            prefixes.learn_git(old, new, source, target)
            return
        space = rest.find(b" ", space + 1)


def plain_section_paths(minus_field: bytes, plus_field: bytes, prefixes: Prefixes) -> list[bytes]:
    """Touched name of a plain ``---``/``+++`` pair (``diff -u``, ``diff -ruN``, hg, svn)."""
    return plain_names_paths(header_name(minus_field), header_name(plus_field), prefixes)


def plain_names_paths(old: bytes, new: bytes, prefixes: Prefixes) -> list[bytes]:
    """Touched name given the two (unquoted) names of a plain section.

    Both sides naming one file (``a/x``/``b/x``, ``old/x``/``new/x``, ``x``/``x``) give that
    file; one side ``/dev/null`` gives the other, without a learned or ``a/``/``b/`` prefix;
    two unrelated names (``x.orig``/``x``) give the ``+++`` name, the file a patch writes.
    """
    if old == DEV_NULL and new == DEV_NULL:
        return []
    if old == DEV_NULL:
        side = prefixes.plain[1] if prefixes.plain else b"b/"
        return [tidy(strip_prefix(new, side))]
    if new == DEV_NULL:
        side = prefixes.plain[0] if prefixes.plain else b"a/"
        return [tidy(strip_prefix(old, side))]
    name = common_name(old, new)
    if name is None:
        return [tidy(new)]
    if prefixes.plain is None and name != old:
        prefixes.plain = (old[: len(old) - len(name)], new[: len(new) - len(name)])
    return [tidy(name)]


def binary_line_paths(body: bytes, prefixes: Prefixes) -> list[bytes]:
    """Names in ``Binary files X and Y differ`` (``body`` is ``X and Y``) outside git sections."""
    if body.startswith(b'"'):
        old, end = c_unquote(body)
        if body[end : end + 5] != b" and ":
            raise ValueError("expected ' and ' after the first quoted name")
        return plain_names_paths(old, unquote_whole(body[end + 5 :]), prefixes)
    candidates: list[tuple[bytes, bytes]] = []
    at = body.find(b" and ")
    while at >= 0:
        candidates.append((body[:at], unquote_whole(body[at + 5 :])))
        at = body.find(b" and ", at + 1)
    if not candidates:
        return []
    for old, new in candidates:
        if DEV_NULL in (old, new) or common_name(old, new) is not None:
            return plain_names_paths(old, new, prefixes)
    old, new = candidates[0]
    return plain_names_paths(old, new, prefixes)
