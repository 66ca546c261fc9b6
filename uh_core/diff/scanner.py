"""The exact, line-at-a-time reader of a diff: file headers, hunks counted line by line.

:mod:`uh_core.diff.patch_paths` drives it over buffers and skips the bodies of git hunks
in bulk; every header, every plain (``diff -u``) hunk and every ambiguous stretch goes
through :meth:`LineMachine.feed`. Lines arrive without their ``\\n``; a trailing ``\\r``
(CRLF input) is dropped here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from uh_core.diff.names import decode_path, header_name, unquote_whole
from uh_core.diff.sections import (
    GitSection,
    Prefixes,
    binary_line_paths,
    git_section_paths,
    plain_section_paths,
)
from uh_core.errors import DiffError

# States
OUTSIDE = 0  # between files, or after a file's hunks (a "@@" then starts another hunk)
PLAIN_MINUS = 1  # saw "--- X" outside a git header
PLAIN_PLUS = 2  # saw "--- X" and "+++ Y": a file only if "@@ -" follows
GIT_HEADER = 3  # inside the extended header of "diff --git"
HUNK = 4  # inside a hunk, counting its lines
CC_HEADER = 5  # header of a combined diff ("diff --cc")
CC_HUNK = 6
BINARY = 7  # "GIT binary patch" data

HUNK_HEADER = re.compile(rb"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_EXTENDED = (
    b"index ",
    b"old mode ",
    b"new mode ",
    b"new file mode ",
    b"deleted file mode ",
    b"similarity index ",
    b"dissimilarity index ",
    b"Binary files ",
)
_RENAMES = (b"rename from ", b"rename to ", b"copy from ", b"copy to ")
_RENAMES_OLD = (b"rename old ", b"rename new ")  # git before 1.5 wrote these
_CC_HEADER = (b"index ", b"mode ", b"new file mode ", b"deleted file mode ", b"--- ", b"+++ ")
_COMMIT_LIKE = re.compile(rb"(commit [0-9a-f]{7,}|From [0-9a-f]{40} )")


class LineMachine:
    """State of one read through a diff; collects touched paths and counts file sections."""

    def __init__(self, source: str, line_of: Callable[[int], int]) -> None:
        self.source = source
        self.line_of = line_of  # byte offset of a line -> its 1-based number (for errors)
        self.state = OUTSIDE
        self.files = 0
        self.paths: dict[bytes, None] = {}
        self.unsure: set[bytes] = set()  # names from "diff --git p/x p/x" (see finish)
        self.in_file = False  # a file header was read and "@@" may start a hunk there
        self.git_file = False  # that file is a "diff --git" one
        self.hunk_fresh = False  # the current hunk has not consumed a line yet
        self.old = self.new = 0
        self.hunk_header = b""
        self.recognized = False  # saw diff output even if it names no file ("Only in")
        self.first_text: bytes | None = None
        self.prefixes = Prefixes()
        self._section: GitSection | None = None
        self._minus = b""
        self._plus = b""
        self.at = 0

    # -- errors --------------------------------------------------------------------------
    def error(self, message: str, section: GitSection | None = None) -> DiffError:
        if section is None:
            line = self.line_of(self.at)
        else:
            line = section.line if section.line is not None else self.line_of(section.at)
        return DiffError(f"{self.source}:{line}: {message}")

    def pin_lines(self) -> None:
        """The current buffer is about to go: number the lines still referred to by offset."""
        section = self._section
        if section is not None and section.line is None:
            section.line = self.line_of(section.at)

    # -- recording -----------------------------------------------------------------------
    def add(self, names: list[bytes]) -> None:
        self.files += 1
        for name in names:
            if name:
                self.paths[name] = None

    def open_git_file(self, *names: bytes) -> None:
        """A ``diff --git`` section read by the driver's fast path."""
        self.add(list(names))
        self.in_file = True
        self.git_file = True

    def start_hunk(self, line: bytes) -> None:
        match = HUNK_HEADER.match(line)
        if match is None:
            raise self.error(f"malformed hunk header {_show(line)}")
        self.old = int(match[2]) if match[2] is not None else 1
        self.new = int(match[4]) if match[4] is not None else 1
        self.hunk_header = match[0]
        self.hunk_fresh = True
        self.state = HUNK if (self.old or self.new) else OUTSIDE

    # -- the machine ---------------------------------------------------------------------
    def feed(self, line: bytes, at: int) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        self.at = at
        state = self.state
        if state == HUNK:
            self._hunk_line(line)
        elif state == OUTSIDE:
            self._outside(line)
        elif state == GIT_HEADER:
            self._git_header(line)
        elif state == PLAIN_MINUS:
            if line.startswith(b"+++ "):
                self._plus = line[4:]
                self.state = PLAIN_PLUS
            else:
                self.state = OUTSIDE
                self._outside(line)
        elif state == PLAIN_PLUS:
            self.state = OUTSIDE
            if line.startswith(b"@@ -"):
                self._plain_file()
            self._outside(line)
        elif state == BINARY:
            if not (
                not line
                or line.startswith((b"literal ", b"delta "))
                or (line[:1].isalpha() and b" " not in line)
            ):
                self.state = OUTSIDE
                self._outside(line)
        elif state == CC_HEADER:
            if line.startswith(b"@@"):
                self.state = CC_HUNK
            elif not line.startswith(_CC_HEADER):
                self.state = OUTSIDE
                self._outside(line)
        elif state == CC_HUNK and line[:1] not in (b" ", b"+", b"-", b"\\", b"", b"@"):
            self.state = OUTSIDE
            self._outside(line)

    def _hunk_line(self, line: bytes) -> None:
        self.hunk_fresh = False
        first = line[:1]
        if first == b" " or not line:
            self.old -= 1
            self.new -= 1
        elif first == b"-":
            self.old -= 1
        elif first == b"+":
            self.new -= 1
        elif first == b"\\":
            return
        else:
            raise self.error(
                f"hunk {_show(self.hunk_header)} ends early: {self.old} old and {self.new} new "
                f"line(s) missing before {_show(line)}"
            )
        if self.old < 0 or self.new < 0:
            raise self.error(f"hunk {_show(self.hunk_header)} has more lines than its header says")
        if self.old == 0 and self.new == 0:
            self.state = OUTSIDE

    def _outside(self, line: bytes) -> None:
        if line.startswith(b"diff "):
            self._diff_line(line)
        elif line.startswith(b"--- "):
            self._minus = line[4:]
            self.state = PLAIN_MINUS
        elif line.startswith(b"@@"):
            if self.in_file:
                self.start_hunk(line)
            else:
                self._text(line)
        elif line.startswith(b"Binary files ") and line.endswith(b" differ"):
            self._named(lambda: binary_line_paths(line[13:-7], self.prefixes))
            self.in_file = self.git_file = False
        elif line.startswith(b"Only in "):
            self.recognized = True
        elif not line.startswith(b"\\"):
            self._text(line)

    def _text(self, line: bytes) -> None:
        """A line that is no part of a diff: commit headers, mail, "Index:", prose."""
        if self.first_text is None and line.strip():
            self.first_text = line
        self.in_file = self.git_file = False

    def _diff_line(self, line: bytes) -> None:
        self.in_file = self.git_file = False
        if line.startswith(b"diff --git "):
            self._section = GitSection(rest=line[11:], at=self.at)
            self.state = GIT_HEADER
        elif line.startswith((b"diff --cc ", b"diff --combined ")):
            name = line.split(b" ", 2)[2]
            self._named(lambda: [unquote_whole(name)])
            self.in_file = True
            self.state = CC_HEADER
        else:  # "diff -ruN a/x b/x": the --- and +++ lines that follow name the file
            self.recognized = True

    def _git_header(self, line: bytes) -> None:
        section = self._section
        assert section is not None
        if section.minus is not None and section.plus is None and not line.startswith(b"+++ "):
            raise self.error(f"'--- ' line not followed by a '+++ ' line (found {_show(line)})")
        if line.startswith(b"@@"):
            self.finish_git()
            self.start_hunk(line)
        elif line.startswith(b"--- "):
            section.minus = self._name(line[4:])
        elif line.startswith(b"+++ "):
            section.plus = self._name(line[4:])
        elif line.startswith(_RENAMES) or line.startswith(_RENAMES_OLD):
            value = line.split(b" ", 2)[2]
            section.renamed.append(self._name(value, whole=True))
        elif line.startswith(_GIT_EXTENDED):
            pass
        elif line.startswith(b"GIT binary patch"):
            self.finish_git()
            self.state = BINARY
        else:
            self.finish_git()
            self.state = OUTSIDE
            self._outside(line)

    def _name(self, field: bytes, whole: bool = False) -> bytes:
        try:
            return unquote_whole(field) if whole else header_name(field)
        except ValueError as exc:
            raise self.error(f"bad quoted name {_show(field)}: {exc}") from None

    def finish_git(self) -> None:
        section = self._section
        if section is None:
            return
        self._section = None
        self.state = OUTSIDE
        try:
            names, unsure = git_section_paths(section, self.prefixes)
        except ValueError as exc:
            raise self.error(f"'diff --git {_show(section.rest)}': {exc}", section) from None
        self.add(names)
        if unsure:
            self.unsure.update(names)
        self.in_file = self.git_file = True

    def _plain_file(self) -> None:
        minus, plus = self._minus, self._plus
        self._named(lambda: plain_section_paths(minus, plus, self.prefixes))
        self.in_file = True
        self.git_file = False

    def _named(self, names: Callable[[], list[bytes]]) -> None:
        try:
            self.add(names())
        except ValueError as exc:
            raise self.error(f"bad file name: {exc}") from None

    def reopen_git_file(self) -> None:
        """Back to "between hunks" of the current git file (the driver re-reads from a header)."""
        self.state = OUTSIDE
        self.in_file = self.git_file = True

    def finish(self) -> None:
        """End of input: close what is open, refuse input that held no diff at all."""
        if self.state == GIT_HEADER:
            section = self._section
            if section is not None and section.minus is not None and section.plus is None:
                raise self.error("input ends after a '--- ' line with no '+++ ' line")
            self.finish_git()
        elif self.state == HUNK:
            raise self.error(
                f"input ends inside hunk {_show(self.hunk_header)}: {self.old} old and "
                f"{self.new} new line(s) missing (truncated patch?)"
            )
        self.state = OUTSIDE
        self._settle_prefixes()
        if self.files or self.recognized or self.first_text is None:
            return
        if _COMMIT_LIKE.match(self.first_text):
            return  # commits without changes (git log -p of an empty commit)
        raise DiffError(
            f"{self.source}: not a diff: no file header ('diff --git', or '--- '/'+++ ' "
            f"followed by '@@') found; first text line: {_show(self.first_text)}"
        )

    def _settle_prefixes(self) -> None:
        """Strip a shared custom prefix (learned from a rename) from names read before it."""
        known = self.prefixes.git
        if not self.unsure or known is None or known[0] != known[1] or not known[0]:
            return
        prefix = known[0]
        self.paths = {
            (name[len(prefix) :] if name in self.unsure and name.startswith(prefix) else name): None
            for name in self.paths
        }
        self.unsure.clear()

    def decoded(self) -> list[str]:
        if not self.paths:
            return []
        # One decode for all names (a name never holds a NUL byte).
        return decode_path(b"\0".join(self.paths)).split("\0")


def _show(data: bytes, limit: int = 60) -> str:
    text = data.decode("utf-8", "backslashreplace")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text)
