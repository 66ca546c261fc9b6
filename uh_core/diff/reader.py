"""The buffer driver behind :mod:`uh_core.diff.patch_paths`: exact where it matters, bulk elsewhere.

Every header goes through the exact :class:`~uh_core.diff.scanner.LineMachine`, except the
common git header (same name both sides, default prefixes), which one regular expression
reads. The bodies of git hunks are skipped up to the next line starting with ``diff ``: no
hunk line can start with a letter. A stretch of git hunks that holds something a header could
be made of — ``--- X``/``+++ Y`` followed by ``@@ -``, or ``Binary files … differ`` — is
re-read line by line from its hunk header with hunk counting, so a content line such as
``+++ x`` is never taken for a header. Plain (``diff -u``) hunks are always counted, in bulk
when their lines allow it: there nothing but the counts says where a hunk ends.

While skipping, one regular-expression scan finds the lines that matter, so a run of common
git files costs one C-speed pass and a few Python steps per file. When a buffer ends inside
git hunks, the next one starts again at the last hunk header, so that a re-read always has
its header at hand; the outcome never depends on where buffers end (except for a malformed
git hunk longer than ``CARRY_LIMIT``, which is counted, so a wrong count there is reported).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from uh_core.diff.scanner import HUNK, OUTSIDE, LineMachine

CARRY_LIMIT = 1 << 20  # a longer last hunk is counted instead of carried over

_NAME = rb"((?!\./)[^\n\"\r ]+)"  # no spaces, quotes or "./": nothing to decide
_MODES = rb"(?:(?:new|deleted) file mode [0-7]+\r?\n|old mode [0-7]+\r?\nnew mode [0-7]+\r?\n)?"
_FAST = (
    # the same file on both sides: a hunk follows, or (binary, mode only) the next file
    rb"--git a/" + _NAME + rb" b/\1\r?\n" + _MODES + rb"(?:index [^\n]*\n)?"
    # (not /dev/null on both sides: that names no file, the exact way says so)
    rb"(?:(?:--- a/\1\r?\n\+\+\+ (?:b/\1|/dev/null)|--- /dev/null\r?\n\+\+\+ b/\1)\r?\n(?=@@ -)"
    rb"|(?:Binary files (?:a/\1|/dev/null) and (?:b/\1|/dev/null) differ\r?\n)?(?=diff ))"
    # a rename or copy: both names
    rb"|--git a/" + _NAME + rb" b/" + _NAME + rb"\r?\nsimilarity index \d+%\r?\n"
    rb"(?:rename|copy) from \2\r?\n(?:rename|copy) to \3\r?\n(?:index [^\n]*\n)?"
    rb"(?:--- a/\2\r?\n\+\+\+ b/\3\r?\n(?=@@ -)|(?=diff ))"
)
# The common shapes of a git file header, read by one regular expression: default prefixes,
# plain names, a hunk or the next file following. (Quoted names, names with spaces, binary
# patches and anything else go the exact way.)
FAST_GIT = re.compile(rb"diff (?:" + _FAST + rb")")
# Every line starting with "diff ", "+++" or "Binary"; groups 1 (or 2 and 3) are the names
# when the line starts a common git header (whose own "+++" line the match takes in).
_LINES_THAT_MATTER = re.compile(rb"\n(?:diff (?:" + _FAST + rb")?|\+\+\+|Binary)")


class Reader:
    """Feeds buffers of whole lines to a LineMachine, skipping git hunk bodies in bulk."""

    def __init__(self, source: str, resolve_line: Callable[[int], int] | None) -> None:
        self.machine = LineMachine(source, self._line_of)
        self._resolve = resolve_line
        self.base = 0  # offset of buf[0] in the whole input
        self._lines_before = 0
        self.buf: bytes | bytearray = b""
        self._no_skip = False  # count the remaining hunks of this buffer exactly
        self._skipping = False
        self._skip_from = 0  # start of the current git file's latest hunk header line
        self._carry_hunk = False  # the next buffer starts at a carried git hunk header
        self._final = False
        self._keep = 0
        self._pending = (0, 0)

    def _line_of(self, at: int) -> int:
        if self._resolve is not None:
            return self._resolve(at)
        return self._lines_before + self.buf.count(b"\n", 0, max(at - self.base, 0)) + 1

    def chunk(self, buf: bytes | bytearray, end: int, final: bool = False) -> int:
        """Read ``buf[:end]`` (whole lines); returns where the next buffer must start.

        ``buf`` may be a reused bytearray: nothing here reads past ``end``, and only
        ``bytes`` copies of it are kept.
        """
        keep, lines = self._pending
        self.base += keep
        self._lines_before += lines
        self._pending = (0, 0)
        self.buf = buf
        self._final = final
        self._keep = end
        self._no_skip = self._skipping = False
        machine = self.machine
        pos = 0
        if self._carry_hunk:  # skip on from the carried hunk header (not read again)
            self._carry_hunk = False
            self._skipping = True
            machine.state = OUTSIDE
            self._skip_from = 0
            pos = buf.find(b"\n", 0, end) + 1
        while pos < end or self._skipping:
            if self._skipping:
                pos = self._skip(pos, end)
                continue
            state = machine.state
            if state == HUNK:
                if machine.git_file and machine.hunk_fresh and pos and not self._no_skip:
                    self._skip_from = buf.rfind(b"\n", 0, pos - 1) + 1
                    self._skipping = True
                    machine.state = OUTSIDE  # the skip decides what comes next
                else:
                    pos = self._bulk(pos, end)
                continue
            if state == OUTSIDE and buf.startswith(b"diff --git ", pos):
                match = FAST_GIT.match(buf, pos, end)
                if match is not None:
                    self._open_fast(match)
                    pos = self._skip_from = match.end()
                    self._skipping = True
                    continue
            newline = buf.find(b"\n", pos, end)
            machine.feed(bytes(buf[pos:newline]), self.base + pos)
            pos = newline + 1
        if (
            machine.state == HUNK
            and machine.git_file
            and machine.hunk_fresh
            and not (final or self._no_skip or self._carry_hunk)
        ):
            # The buffer ends right after a git hunk header: skip on in the next one.
            self._carry_hunk = True
            self._keep = buf.rfind(b"\n", 0, end - 1) + 1
        return self._advance(min(self._keep, end))

    def _advance(self, keep: int) -> int:
        """The next buffer starts at ``keep``; applied when it comes (errors at the end of
        input still point into this one)."""
        lines = 0
        if self._resolve is None:
            lines = self.buf.count(b"\n", 0, keep)
            self.machine.pin_lines()
        self._pending = (keep, lines)
        return keep

    def _open_fast(self, match: re.Match[bytes]) -> None:
        machine = self.machine
        if machine.prefixes.git is None:
            machine.prefixes.git = (b"a/", b"b/")  # what the exact reading would learn
        name = match[1]
        if name is not None:
            machine.open_git_file(name)
        else:
            machine.open_git_file(match[2], match[3])

    def _skip(self, pos: int, end: int) -> int:
        """Skip git hunks file after file, reading each common git header on the way.

        ``pos`` is a line start right after a hunk header (never 0). One scan finds every
        line that matters: ``diff `` lines (a common git header is read right there),
        ``+++`` and ``Binary`` lines (checked: could they be a header?).
        """
        buf, machine = self.buf, self.machine
        paths = machine.paths
        files = 0
        try:
            while True:
                for match in _LINES_THAT_MATTER.finditer(buf, pos - 1, end):
                    name = match[1]
                    if name:  # a common git header: its hunks (or the next file) follow
                        paths[name] = None
                    elif match[2]:  # a rename or copy
                        paths[match[2]] = paths[match[3]] = None
                    else:
                        line = match.start() + 1
                        if buf.startswith(b"diff ", line):  # another header: read it exactly
                            self._skipping = False
                            machine.state = OUTSIDE
                            return line
                        suspect = self._suspect(line, end)
                        if suspect is None:
                            continue
                        start, stop = suspect
                        if stop >= end:  # the line that decides is in the next buffer
                            return self._buffer_ends_in_hunks(end, before=start)
                        return self._reread(start, stop)
                    files += 1
                    pos = self._skip_from = match.end()
                    if buf.startswith(b"diff ", pos):
                        break  # the match took the newline before the next header: rescan
                else:
                    return self._buffer_ends_in_hunks(end)
        finally:
            if files:
                machine.files += files
                machine.in_file = machine.git_file = True
                if machine.prefixes.git is None:
                    machine.prefixes.git = (b"a/", b"b/")  # what the exact reading learns

    def _suspect(self, line: int, end: int) -> tuple[int, int] | None:
        """Could the ``+++``/``Binary`` line at ``line`` be part of a header?

        Returns the stretch to re-read (its start, its last line) or None. ``---``/``+++``
        is a header only if ``@@ -`` follows; at the end of the buffer that line is not read
        yet (the stretch's last line is then ``end``), at the end of the input there is none.
        """
        buf = self.buf
        if buf.startswith(b"+++ ", line):
            before = buf.rfind(b"\n", 0, line - 1) + 1
            if not buf.startswith(b"--- ", before):
                return None
            after = buf.find(b"\n", line) + 1
            if after >= end:
                return None if self._final else (before, end)
            return (before, line) if buf.startswith(b"@@ -", after) else None
        if buf.startswith(b"Binary files ", line):
            line_end = buf.find(b"\n", line)
            if buf[line:line_end].rstrip(b"\r").endswith(b" differ"):
                return (line, line)
        return None

    def _buffer_ends_in_hunks(self, end: int, before: int | None = None) -> int:
        """The buffer ends inside git hunks: carry the last hunk over, or count it exactly.

        The last hunk of the input is always counted, so a truncated patch is reported.

        ``before``: carry from the last hunk header before it (a suspect stretch whose
        deciding line is not read yet).
        """
        self._skipping = False
        machine = self.machine
        header = self.buf.rfind(b"\n@@", self._skip_from, end if before is None else before)
        start = header + 1 if header >= 0 else self._skip_from
        if not self._final and end - start <= CARRY_LIMIT:
            # The next buffer starts at that header and skips on from there; it is kept only
            # so that a re-read (see _reread) finds its header in the same buffer.
            self._carry_hunk = True
            self._keep = start
            return end
        machine.reopen_git_file()
        self._no_skip = True
        return start

    def _reread(self, start: int, stop: int) -> int:
        """Read exactly from the hunk header before a suspect stretch through its end."""
        self._skipping = False
        header = self.buf.rfind(b"\n@@", self._skip_from, start)
        self.machine.reopen_git_file()
        pos = header + 1 if header >= 0 else self._skip_from
        buf, machine = self.buf, self.machine
        while pos <= stop:
            newline = buf.find(b"\n", pos)
            machine.feed(bytes(buf[pos:newline]), self.base + pos)
            pos = newline + 1
        return pos

    def _bulk(self, pos: int, end: int) -> int:
        """Count hunk lines up to the next ``@@``/``diff `` line at once; else line by line."""
        buf, machine = self.buf, self.machine
        bound = end
        for head in (b"@@", b"diff "):
            if buf.startswith(head, pos):
                bound = pos
                break
            at = buf.find(b"\n" + head, pos, bound)
            if at >= 0:
                bound = at + 1
        if bound > pos:
            lines = buf.count(b"\n", pos, bound)
            first = buf[pos : pos + 1]
            plus = buf.count(b"\n+", pos, bound) + (first == b"+")
            minus = buf.count(b"\n-", pos, bound) + (first == b"-")
            space = buf.count(b"\n ", pos, bound) + (first == b" ")
            marks = buf.count(b"\n\\", pos, bound) + (first == b"\\")
            old, new = minus + space, plus + space
            if plus + minus + space + marks == lines and old <= machine.old and new <= machine.new:
                machine.old -= old
                machine.new -= new
                last = buf.rfind(b"\n", pos, bound - 1)  # start of the last line read
                machine.at = self.base + (last + 1 if last >= 0 else pos)
                machine.hunk_fresh = machine.hunk_fresh and lines == marks
                if machine.old == 0 and machine.new == 0:
                    machine.state = OUTSIDE
                return bound
        while pos < end and machine.state == HUNK:
            newline = buf.find(b"\n", pos)
            machine.feed(bytes(buf[pos:newline]), self.base + pos)
            pos = newline + 1
        return pos
