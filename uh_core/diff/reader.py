"""The buffer driver behind :mod:`uh_core.diff.patch_paths`: exact where it matters, bulk elsewhere.

Every header goes through the exact :class:`~uh_core.diff.scanner.LineMachine`, except the
common git headers of :mod:`uh_core.diff.shapes`, which one regular expression reads. The
bodies of git hunks are skipped up to the next line starting with ``diff ``: no hunk line can
start with a letter. A stretch of git hunks that holds something a header could be made of —
``--- X``/``+++ Y`` followed by ``@@ -``, or ``Binary files … differ`` — is re-read line by
line from its hunk header with hunk counting, so a content line such as ``+++ x`` is never
taken for a header. Plain (``diff -u``) hunks are always counted, in bulk when their lines
allow it: there nothing but the counts says where a hunk ends.

While skipping, one regular-expression scan over the rest of the buffer
(:data:`~uh_core.diff.shapes.EVENTS`) lists the lines that matter, reading every common git
header whole on the way; a run of such files between two lines that need a look costs no
Python step per file (their names go into the set in one call). The list is kept for the
buffer: after an exact stretch, skipping goes on from the first event past it. When a buffer
ends inside git hunks, the next one starts again at the last hunk header, so that a re-read
always has its header at hand; the outcome never depends on where buffers end (except for a
malformed git hunk longer than ``CARRY_LIMIT``, which is counted, so a wrong count there is
reported).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from uh_core.diff.hunks import count_hunk
from uh_core.diff.scanner import HUNK, OUTSIDE, LineMachine
from uh_core.diff.shapes import DEFAULT_PREFIXES, FAST_GIT, Events, quoted_name

CARRY_LIMIT = 1 << 20  # a longer last hunk is counted instead of carried over


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
        self._events = Events()  # of the current buffer

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
        try:
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
                        pos = count_hunk(machine, buf, pos, end, self.base)
                    continue
                if state == OUTSIDE and buf.startswith(b"diff --git ", pos) and self._fast():
                    match = FAST_GIT.match(buf, pos, end)
                    if match is not None:
                        self._open_fast(match)
                        pos = self._skip_from = match.end() + 1  # (a newline ends a match)
                        self._skipping = True
                        continue
                newline = buf.find(b"\n", pos, end)
                machine.feed(bytes(buf[pos:newline]), self.base + pos)
                pos = newline + 1
        finally:
            self._events.clear()  # (they refer to the buffer, which the caller reuses)
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

    def _fast(self) -> bool:
        """May common headers be read whole? Only with the default prefixes (or none learned
        yet): with others the exact reading may strip more than ``a/`` and ``b/``."""
        known = self.machine.prefixes.git
        return known is None or known == DEFAULT_PREFIXES

    def _open_fast(self, match: re.Match[bytes]) -> None:
        """Record a common git header read whole."""
        machine = self.machine
        if match[1] is not None:
            machine.open_git_file(match[1])
        elif match[2] is not None:
            machine.open_git_file(match[2], match[3])
        else:
            machine.open_git_file(quoted_name(match))
        if machine.prefixes.git is None:
            machine.prefixes.git = DEFAULT_PREFIXES  # what the exact reading would learn

    def _skip(self, pos: int, end: int) -> int:
        """Skip git hunks file after file, reading each common git header on the way.

        ``pos`` is a line start right after a hunk header or a common header (never 0). The
        events past it are ``diff `` lines (a common git header is read right there),
        ``+++`` and ``Binary`` lines (checked: could they be a header?). Runs of common
        headers with one plain name, the bulk of a big patch, go into the set in one call.
        """
        buf, machine = self.buf, self.machine
        fast = self._fast()
        files = 0
        found: list[bytes] = []  # names in order, into the set in one call at the end
        index = self._events.at(buf, pos - 1, end)
        events, names = self._events.matches, self._events.names
        count = len(names)
        try:
            while True:
                after = index
                if fast:  # a run of common headers with one plain name
                    try:
                        after = names.index(None, index)
                    except ValueError:
                        after = count
                    if after > index:
                        found += names[index:after]  # type: ignore[arg-type]  # (no None)
                        files += after - index
                        self._skip_from = events[after - 1].end() + 1
                if after == count:
                    return self._buffer_ends_in_hunks(end)
                match = events[after]
                index = after + 1
                if fast and match[2] is not None:  # a rename or copy
                    found += (match[2], match[3])
                elif fast and match[4] is not None:  # a quoted name
                    name = quoted_name(match)
                    if name:  # ("./" alone is no name)
                        found.append(name)
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
                    break  # re-read it (below: after the names found so far)
                files += 1
                self._skip_from = match.end() + 1
        finally:
            if files:
                machine.paths.update(dict.fromkeys(found))
                machine.files += files
                machine.in_file = machine.git_file = True
                if machine.prefixes.git is None:
                    machine.prefixes.git = DEFAULT_PREFIXES  # what the exact reading learns
        return self._reread(start, stop)

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
