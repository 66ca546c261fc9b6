"""Well-formed patches of every shape the reader handles, and a straightforward reading of them.

``reference_read`` feeds every line to the exact :class:`LineMachine` and counts every hunk:
no skipping, no bulk counting, no fast header. On a well-formed patch the real reader must
find exactly what it finds. ``Patch`` builds such patches section by section and records the
paths each section touches (a check on the reference itself).
"""

from __future__ import annotations

import random
from bisect import bisect_right
from dataclasses import dataclass, field

from uh_core.diff.scanner import LineMachine
from uh_core.errors import DiffError

# No "a" or "b": no name holds "a/" or " b/", so the two halves of "diff --git" never blur.
NAME_CHARS = 'cdXYZ019 _-.é日"\\\t'
CONTENT = [
    "alpha",
    "",
    "++ b/x",  # as an added line: "+++ b/x"
    "-- a/x",  # as a removed line: "--- a/x"
    "+ b/x",
    "diff --git a/x b/x",
    "@@ -1 +1 @@",
    "Binary files a/x and b/x differ",
    "GIT binary patch",
    "index 1..2 100644",
    "rename from x",
]


def reference_read(patch: bytes) -> tuple[list[str], int] | str:
    """Paths and file sections, or the error, reading every line exactly."""
    starts = [0]
    lines = patch.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the newline ends the last line; no empty line after it
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    machine = LineMachine("<patch>", lambda at: bisect_right(starts, at))
    try:
        for line, at in zip(lines, starts, strict=False):
            machine.feed(line, at)
        machine.finish()
    except DiffError as exc:
        return str(exc)
    return machine.decoded(), machine.files


def git_name(prefix: str, path: str) -> bytes:
    """``prefix + path`` as git writes it in headers (C-quoted when it must be)."""
    raw = (prefix + path).encode()
    special = {7: "a", 8: "b", 9: "t", 10: "n", 11: "v", 12: "f", 13: "r", 34: '"', 92: "\\"}
    if not any(byte < 0x20 or byte >= 0x7F or byte in (34, 92) for byte in raw):
        return raw
    out = []
    for byte in raw:
        if byte in special:
            out.append("\\" + special[byte])
        elif byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:03o}")
        else:
            out.append(chr(byte))
    return ('"' + "".join(out) + '"').encode()


def _side(prefix: str, path: str) -> bytes:
    """A ---/+++ name: git adds a tab after an unquoted name holding a space."""
    name = git_name(prefix, path)
    return name + b"\t" if b" " in name and not name.startswith(b'"') else name


@dataclass
class Patch:
    rng: random.Random
    lines: list[bytes] = field(default_factory=list)
    touched: list[str] = field(default_factory=list)
    in_header: bool = False  # the last section is a git header without a hunk

    def name(self, plain: bool = False) -> str:
        chars = "cdXYZ019_-é日" if plain else NAME_CHARS
        segments = []
        for _ in range(self.rng.randint(1, 3)):
            segment = "".join(self.rng.choice(chars) for _ in range(self.rng.randint(1, 5)))
            segments.append("x" + segment if segment.strip(".") == "" else segment)
        return "/".join(segments)

    def hunks(self, count: int, only: str | None = None) -> None:
        for _ in range(count):
            body = []
            for _ in range(self.rng.randint(1, 6)):
                mark = only or self.rng.choice(" +-")
                body.append(mark + self.rng.choice(CONTENT))
            if only is None and self.rng.random() < 0.3:
                body += ["--- a/x", "+++ b/x"]  # a header triple with the next "@@ -"
            old = sum(line[0] in " -" for line in body)
            new = sum(line[0] in " +" for line in body)
            self.lines.append(f"@@ -{1 if old else 0},{old} +{1 if new else 0},{new} @@ f".encode())
            self.lines += [line.encode() for line in body]
            if self.rng.random() < 0.1:
                self.lines.append(b"\\ No newline at end of file")

    def git(self) -> None:
        """One ``diff --git`` section of a random kind."""
        rng, add = self.rng, self.lines.append
        old = self.name()
        new = old
        kind = rng.choice(
            ["modify", "modify", "add", "delete", "rename", "copy", "mode", "binary", "data"]
        )
        if kind in ("rename", "copy"):
            new = self.name()
            while new == old:
                new = self.name()
        if rng.random() < 0.2:
            add(b"commit " + rng.randbytes(20).hex().encode())
            self.lines += [b"Author: A U Thor <a@example.com>", b"", b"    message", b""]
        add(b"diff --git " + git_name("a/", old) + b" " + git_name("b/", new))
        self.touched += [old] if new == old else [old, new]
        if kind in ("rename", "copy"):
            add(f"similarity index {rng.randint(50, 100)}%".encode())
            add(f"{kind} from ".encode() + git_name("", old))
            add(f"{kind} to ".encode() + git_name("", new))
        elif kind == "mode":
            self.lines += [b"old mode 100644", b"new mode 100755"]
        elif kind == "add":
            add(b"new file mode 100644")
        elif kind == "delete":
            add(b"deleted file mode 100644")
        if kind in ("mode", "rename", "copy") and rng.random() < 0.5:
            return  # no content change
        add(b"index 1a2b3c4..5d6e7f8" + (b" 100644" if kind not in ("add", "delete") else b""))
        if kind == "binary":
            add(
                b"Binary files " + git_name("a/", old) + b" and " + git_name("b/", new) + b" differ"
            )
        elif kind == "data":
            self.lines += [b"GIT binary patch", b"literal 12", b"zcmV?d00001xYz", b""]
            self.lines += [b"literal 0", b"HcmV?d00001", b""]
        elif kind == "add" and rng.random() < 0.2:
            return  # an empty new file: no hunk
        else:
            add(b"--- " + (b"/dev/null" if kind == "add" else _side("a/", old)))
            add(b"+++ " + (b"/dev/null" if kind == "delete" else _side("b/", new)))
            only = {"add": "+", "delete": "-"}.get(kind)
            self.hunks(1 if only else self.rng.randint(1, 3), only)

    def plain(self) -> None:
        """A ``diff -u``/``diff -r`` section (names as the tool prints them: never quoted)."""
        name = self.name(plain=True)
        self.touched.append(name)
        if self.rng.random() < 0.3:
            if self.in_header:  # (there it would be a line of that git header)
                self.lines.append(f"diff -r a/{name} b/{name}".encode())
            self.lines.append(f"Binary files a/{name} and b/{name} differ".encode())
            return
        if self.in_header or self.rng.random() < 0.5:
            self.lines.append(f"diff -ruN a/{name} b/{name}".encode())
        self.lines.append(f"--- a/{name}\t2024-01-01 00:00:00.000000000 +0000".encode())
        self.lines.append(f"+++ b/{name}\t2024-01-02 00:00:00.000000000 +0000".encode())
        self.hunks(self.rng.randint(1, 2))

    def build(self, sections: int, plain_share: float = 0.1) -> bytes:
        for _ in range(sections):
            if self.rng.random() < plain_share:
                self.plain()
            else:
                self.git()
            self.in_header = not self.lines[-1].startswith((b" ", b"+", b"-", b"\\"))
        return b"".join(line + b"\n" for line in self.lines)


def random_patch(seed: int, sections: int) -> tuple[bytes, list[str]]:
    """A patch and the paths it touches, each once, in order of appearance."""
    patch = Patch(random.Random(seed))
    data = patch.build(sections)
    return data, list(dict.fromkeys(patch.touched))
