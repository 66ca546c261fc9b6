"""The agent's diff scanned for the shapes of judge tampering: a green becomes ``needs review``.

Code the gate imports runs inside the process that reports the verdict, and can lie about
it (docs/security.md, "Shapes of judge tampering"). This reads the agent's diff against the
base commit (``diff.patch``, as :mod:`uh_core.diff.capture` writes it) and names every
**added** line that has one of the shapes in :mod:`uh_core.judge.tamper_shapes`, with its
path and line number in the new file; plus files that are suspect by name alone (a
``sitecustomize.py`` or ``.pth`` file, bytecode or a native library, a new ``conftest.py``).
Removed and context lines never count: the base is what the operator already trusts.

A heuristic, never a proof: it cannot see through code written to evade it (``dynamic-code``
points at the usual ways), and a hit says "a human should read this line", not "tampered".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from uh_core.diff.names import decode_path, header_name, unquote_whole
from uh_core.judge import tamper_shapes as shapes

MAX_HITS = 100  # hits kept per diff; the rest are counted in one last line
TEXT_WIDTH = 160  # characters of a line kept in a hit
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")
_MORE = re.compile(r"^…: more: (\d+) more line")


@dataclass(frozen=True)
class ReviewHit:
    path: str
    line: int  # in the new file; 0 for a file suspect by its name alone
    code: str
    text: str  # the line, bounded and made printable

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.code}: {self.text}"


def shown(text: str, width: int = TEXT_WIDTH) -> str:
    """One line as a terminal may show it: whitespace collapsed, control and bidi characters
    escaped (the text is the agent's), at most ``width`` characters."""
    one = " ".join(text.split())
    safe = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in one)
    return safe if len(safe) <= width else safe[: width - 1] + "…"


def _code_part(line: str, config: bool) -> str:
    """The line without its comment (roughly: a ``#`` after balanced quotes)."""
    stripped = line.lstrip()
    if stripped.startswith("#") or (config and stripped.startswith(";")):
        return ""
    at = line.find("#")
    while at >= 0:
        before = line[:at]
        if before.count('"') % 2 == 0 and before.count("'") % 2 == 0:
            return before
        at = line.find("#", at + 1)
    return line


class _File:
    """One file section of the diff as it is read."""

    def __init__(self, path: str | None, first: int) -> None:
        self.path = path
        self.first = first  # where its hits begin in the scan's list
        self.new = False
        self.deleted = False
        self.binary = False  # its section is a binary patch: no lines to scan
        self.def_indent = -1  # the enclosing ``def``'s indentation (-1: none known)
        self.def_name = ""

    @property
    def code(self) -> bool:
        return self.path is not None and not shapes.PROSE_OR_DATA.search(self.path)

    @property
    def config(self) -> bool:
        return self.path is not None and bool(shapes.CONFIG_FILE.search(self.path))

    @property
    def attributes(self) -> bool:
        return self.path is not None and bool(shapes.ATTRIBUTES_FILE.search(self.path))

    def track_def(self, text: str) -> None:
        """Keep the enclosing function (for an exit inside a pytest hook)."""
        if not text.strip():
            return
        found = _DEF.match(text) if "def" in text else None
        indent = len(text) - len(text.lstrip())
        if found is not None:
            self.def_indent, self.def_name = len(found.group(1)), found.group(2)
        elif self.def_indent >= 0 and indent <= self.def_indent:
            self.def_indent, self.def_name = -1, ""


class _Scan:
    def __init__(self) -> None:
        self.hits: list[ReviewHit] = []
        self.more = 0
        self.file: _File | None = None

    def hit(self, path: str, line: int, code: str, text: str) -> None:
        if len(self.hits) >= MAX_HITS:
            self.more += 1
            return
        self.hits.append(ReviewHit(shown(path, 200), line, code, shown(text)))

    def end_file(self) -> None:
        """A file suspect by its name: one hit, before its lines'."""
        file, self.file = self.file, None
        if file is None or file.path is None or file.deleted:
            return
        path, code = file.path, None
        if shapes.STARTUP_FILE.search(path):
            code = "startup-file"
        elif shapes.COMPILED_FILE.search(path):
            code = "compiled-file"
        elif file.new and shapes.CONFTEST.search(path):
            code = "conftest"
        elif file.binary and not shapes.BINARY_BY_NATURE.search(path):
            code = "binary-diff"
        if code is None:
            return
        self.hit(path, 0, code, "new file" if file.new else "changed file")
        if len(self.hits) > file.first + 1 and self.hits[-1].line == 0:
            self.hits.insert(file.first, self.hits.pop())

    def added(self, number: int, text: str) -> None:
        file = self.file
        assert file is not None and file.path is not None
        if not file.code:
            return
        code = _code_part(text, file.config)
        if not code.strip():
            return
        found: list[str] = []
        words = set(shapes.IDENTIFIER.findall(code))
        if not words.isdisjoint(shapes.ALL_WORDS) or any(m in code for m in shapes.ALL_MARKS):
            found += [
                s.code
                for s in shapes.CODE_SHAPES
                if s.may_match(words, code) and s.pattern.search(code)
            ]
        hook = bool(file.def_name) and shapes.HOOK_NAMES.match(file.def_name) is not None
        if hook and shapes.EXIT_CALL.search(code):
            found.append(shapes.EXIT_IN_HOOK.code)
        if file.config:
            found += [s.code for s in shapes.CONFIG_SHAPES if s.pattern.search(code)]
        if file.attributes:
            found += [s.code for s in shapes.ATTRIBUTE_SHAPES if s.pattern.search(code)]
        if found:  # one hit per line, naming every shape it has
            self.hit(file.path, number, ",".join(found), text)


def _git_header_path(rest: str) -> str | None:
    """``diff --git a/X b/X``: the new name when nothing better follows (binary, mode-only)."""
    if rest.startswith('"'):
        quoted = rest.rfind(' "')
        if quoted > 0:
            name = unquote_whole(rest[quoted + 1 :].encode("utf-8", "surrogateescape"))
            return decode_path(name).removeprefix("b/")
    at = rest.rfind(" b/")
    return rest[at + 3 :] if at >= 0 else None


def scan_text(diff_text: str) -> list[ReviewHit]:
    """Every added line (and file) of ``diff_text`` with a shape of judge tampering."""
    scan = _Scan()
    old_left = new_left = 0
    number = 0
    for line in diff_text.split("\n"):
        line = line.removesuffix("\r")
        file = scan.file
        if file is not None and (old_left > 0 or new_left > 0):
            head = line[:1]
            if head == "+":
                number, new_left = number + 1, new_left - 1
                file.track_def(line[1:])
                if file.path is not None:
                    scan.added(number - 1, line[1:])
                continue
            if head == "-":
                old_left -= 1
                continue
            if head in (" ", ""):
                number, old_left, new_left = number + 1, old_left - 1, new_left - 1
                file.track_def(line[1:])
                continue
            if head == "\\":
                continue
            old_left = new_left = 0  # a malformed hunk ends here; read the line as a header
        if line.startswith("diff --git "):
            scan.end_file()
            scan.file = _File(_git_header_path(line[len("diff --git ") :]), len(scan.hits))
        elif file is None:
            continue
        elif line.startswith("new file mode"):
            file.new = True
        elif line.startswith("deleted file mode"):
            file.deleted = True
        elif line.startswith("GIT binary patch") or (
            line.startswith("Binary files ") and line.endswith(" differ")
        ):
            file.binary = True
        elif line.startswith("rename to "):
            file.path = decode_path(unquote_whole(line[10:].encode("utf-8", "surrogateescape")))
        elif line.startswith("+++ "):
            name = decode_path(header_name(line[4:].encode("utf-8", "surrogateescape")))
            file.deleted = name == "/dev/null"
            file.path = None if file.deleted else name.removeprefix("b/")
        elif (found := _HUNK.match(line)) is not None:
            old_left = int(found.group(1) or "1")
            new_left = int(found.group(3) or "1")
            number = int(found.group(2))
            file.def_indent, file.def_name = -1, ""
            file.track_def(found.group(4))  # git names the enclosing top-level def here
    scan.end_file()
    if scan.more:
        scan.hits.append(ReviewHit("…", 0, "more", f"{scan.more} more line(s) not listed"))
    return scan.hits


def scan_patch(patch: Path) -> list[ReviewHit]:
    """:func:`scan_text` over a patch file (bytes that are not UTF-8 are kept visible)."""
    return scan_text(patch.read_bytes().decode("utf-8", "surrogateescape"))


def review_lines(patch: Path) -> list[str]:
    """The ledger's ``review``: one ``path:line: code: text`` per hit; [] when the patch is
    missing (nothing was captured, nothing to point at)."""
    if not patch.is_file():
        return []
    return [str(hit) for hit in scan_patch(patch)]


def review_count(lines: list[str]) -> int:
    """How many lines ``lines`` stands for (its last may say how many more were not listed)."""
    if lines and (found := _MORE.match(lines[-1])) is not None:
        return len(lines) - 1 + int(found.group(1))
    return len(lines)


def why(code: str) -> str:
    """The one-line reason of a hit's code."""
    if code in shapes.FILE_SHAPES:
        return shapes.FILE_SHAPES[code]
    if code == shapes.EXIT_IN_HOOK.code:
        return shapes.EXIT_IN_HOOK.why
    return next((s.why for s in shapes.SHAPES if s.code == code), "")


NEEDS_REVIEW = "needs review"  # what a green with review lines reads, everywhere


def headline(lines: list[str], first: int = 2) -> str:
    """``3 line(s) that could tamper with the judge: a.py:4: …; b.py:9: …`` (the ``first``
    lines named; none when 0)."""
    head = f"{review_count(lines)} line(s) that could tamper with the judge"
    if first <= 0:
        return head
    return f"{head}: " + "; ".join(lines[:first]) + (" …" if len(lines) > first else "")
