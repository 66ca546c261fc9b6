"""Counting the lines of a hunk in bulk, for the exact reading (plain diffs, re-read stretches)."""

from __future__ import annotations

from uh_core.diff.scanner import HUNK, OUTSIDE, LineMachine


def count_hunk(machine: LineMachine, buf: bytes | bytearray, pos: int, end: int, base: int) -> int:
    """Count hunk lines from ``pos`` up to the next ``@@``/``diff `` line at once.

    When the lines there are all hunk lines and fit the counts still open, a few
    ``bytes.count`` calls do it; else they go through the machine one by one (which also
    finds where the hunk ends and what is wrong). Returns where reading goes on.
    """
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
            machine.at = base + (last + 1 if last >= 0 else pos)
            machine.hunk_fresh = machine.hunk_fresh and lines == marks
            if machine.old == 0 and machine.new == 0:
                machine.state = OUTSIDE
            return bound
    while pos < end and machine.state == HUNK:
        newline = buf.find(b"\n", pos)
        machine.feed(bytes(buf[pos:newline]), base + pos)
        pos = newline + 1
    return pos
