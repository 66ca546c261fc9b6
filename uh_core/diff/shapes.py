"""The common shapes of a git file header, read by one regular expression.

:mod:`uh_core.diff.reader` reads these without the exact line machine: default ``a/``/``b/``
prefixes, names without spaces (plain, or C-quoted and the same on both sides), renames, and
a hunk, binary data or the next file following. Each shape is one the exact reading gives the
same names for, as long as the patch uses the default prefixes (the reader checks that);
anything else (names with spaces, ``dissimilarity index``, a rename with a mode change, a
header not followed by a hunk or the next ``diff `` line…) goes the exact way.

Every line here is matched with the newline *before* it, and a match ends right before the
newline that ends its last line: a scan over a buffer of many files (:data:`EVENTS`) then
finds the next line that matters right at the end of a header, with no second look.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from operator import itemgetter

from uh_core.diff.names import c_unquote, tidy

_NAME = rb"((?!\./)[^\n\"\r ]+)"  # no spaces, quotes or "./": nothing to decide
_QUOTED = rb'((?:[^"\\\n]|\\[^\n])+)'  # inside quotes, escapes kept (decoded in Python)
# Extended header lines the exact reader passes over, in any order and number (not "rename"
# or "copy" lines: those name the files).
_EXTENDED = (
    rb"(?:\n(?:index|old mode|new mode|new file mode|deleted file mode|Binary files) [^\n]*)*"
)
_HUNK = rb"(?=\n@@ -)"  # a hunk follows
_NEXT = rb"(?=\ndiff )"  # the next file follows
# "GIT binary patch" data, as the exact reader's BINARY state takes it: empty lines,
# "literal N"/"delta N" and lines of letters and digits with no space.
_BINARY_BODY = rb"\nGIT binary patch\r?(?:\n(?:(?:literal|delta) [^\n]*|[A-Za-z][^ \n]*|\r)?)*"
# "--- X"/"+++ Y" of a plain-named file: with "diff --git a/N b/N" (N without spaces) the
# exact reader takes N from the "diff" line whatever X and Y are, except a quoted X or Y
# (which it would have to decode) and /dev/null on both sides (no file). A field is
# /dev/null when it is that up to a tab or the end of the line (taken wider here: safe).
_NOT_DEV_NULL = rb"(?:[^\"/\n][^\n]*|/(?!dev/null[\t\r\n])[^\n]*|)"
_PLAIN_PAIR = (
    rb"(?:\n--- " + _NOT_DEV_NULL + rb"\n\+\+\+ (?!\")[^\n]*"
    rb"|\n--- /dev/null[^\n]*\n\+\+\+ (?!\"|/dev/null[\t\r\n])[^\n]*)"
)


def _quoted_pair(old: bytes, new: bytes) -> bytes:
    """``--- "a/N"``/``+++ "b/N"`` as git writes them, one side possibly /dev/null."""
    return (
        rb"(?:\n--- " + old + rb"\r?\n\+\+\+ (?:" + new + rb"|/dev/null)"
        rb"|\n--- /dev/null\r?\n\+\+\+ " + new + rb")\r?"
    )


def _same_name(pair: bytes) -> bytes:
    """What follows ``diff --git`` naming one file: a hunk, the next file, or binary data."""
    return _EXTENDED + rb"(?:" + pair + _HUNK + rb"|" + _NEXT + rb"|" + _BINARY_BODY + _NEXT + rb")"


_SHAPES = (
    # group 1: the same plain name on both sides
    rb"a/" + _NAME + rb" b/\1\r?" + _same_name(_PLAIN_PAIR)
    # groups 2 and 3: a rename or copy, both names, as git writes it
    + rb"|a/" + _NAME + rb" b/" + _NAME + rb"\r?\nsimilarity index \d+%\r?"
    rb"\n(?:rename|copy) from \2\r?\n(?:rename|copy) to \3\r?(?:\nindex [^\n]*)?"
    rb"(?:\n--- a/\2\r?\n\+\+\+ b/\3\r?" + _HUNK + rb"|" + _NEXT + rb")"
    # group 4: the same C-quoted name on both sides, as written
    + rb'|"a/' + _QUOTED + rb'" "b/\4"\r?' + _same_name(_quoted_pair(rb'"a/\4"', rb'"b/\4"'))
)  # fmt: skip

# A common git header at the start of a line (from "diff --git").
FAST_GIT = re.compile(rb"diff --git (?:" + _SHAPES + rb")")
# Every line starting with "diff ", "+++" or "Binary" (from the newline before it); a common
# git header there is read whole (groups as in FAST_GIT), and its own "+++" line with it.
EVENTS = re.compile(rb"\n(?:diff (?:--git (?:" + _SHAPES + rb"))?|\+\+\+|Binary)")

DEFAULT_PREFIXES = (b"a/", b"b/")
_PLAIN_NAME = itemgetter(1)  # the name of a common header with one plain name, else None
_START = re.Match.start


class Events:
    """The :data:`EVENTS` of one buffer: scanned once, reused after each exact stretch."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.matches: list[re.Match[bytes]] = []
        self.names: list[bytes | None] = []  # group 1 of each (None: look at it)
        self.scanned = -1  # where the scan started (-1: none for this buffer)

    def at(self, buf: bytes | bytearray, newline: int, end: int) -> int:
        """Index of the first event at or after ``newline`` (a newline in ``buf[:end]``).

        The list is reused as long as no event in it straddles ``newline`` (a scan from
        there would then find the same events); else the rest of the buffer is scanned again.
        """
        if 0 <= self.scanned <= newline:
            at = bisect_left(self.matches, newline, key=_START)
            if at == 0 or self.matches[at - 1].end() <= newline:
                return at
        self.matches = matches = list(EVENTS.finditer(buf, newline, end))
        self.names = list(map(_PLAIN_NAME, matches))
        self.scanned = newline
        return 0


def quoted_name(match: re.Match[bytes]) -> bytes:
    """The name of a common header with a C-quoted name (group 4), decoded."""
    return tidy(c_unquote(b'"' + match[4] + b'"')[0])
