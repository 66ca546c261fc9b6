"""Path globs anchored on the whole repository-relative path, compiled once to a regex.

Rules (documented in docs/diff.md):

- ``*`` matches any run of characters inside one path segment, ``?`` one character
  (never ``/``); a leading dot is not special.
- ``**`` as a whole segment matches zero or more directories: ``**/x`` is ``x`` at any
  depth, ``a/**/b`` includes ``a/b``; a trailing ``/**`` matches everything below (``tests/**``
  matches ``tests/a/b.py``, not the file ``tests`` itself); ``**`` alone matches every path.
  Elsewhere (``a**b``) it acts as ``*``.
- ``[abc]``, ``[a-z]``, ``[!abc]`` / ``[^abc]``: one character of (or not of) a class, never
  ``/``. An unclosed ``[`` is a literal ``[``.
- ``{a,b}``: alternatives, which may nest and hold any of the above; an unclosed ``{`` is a
  literal ``{``.
- ``\\x`` matches ``x`` literally. A leading ``/`` or ``./`` is dropped (globs are always
  anchored at the root); a trailing ``/`` means everything below (``docs/`` = ``docs/**``).
- Matching is case-sensitive.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

_SEGMENT_CHAR = "[^/]"


def _translate(glob: str) -> str:
    """Regex source (no anchors) for one glob."""
    out, _ = _translate_part(_normalized(glob), 0, nested=False)
    return out


def _translate_part(glob: str, i: int, nested: bool) -> tuple[str, int]:
    """Translate from ``i`` up to the end (or, nested, up to an unbraced ``,`` or ``}``)."""
    out: list[str] = []
    size = len(glob)
    while i < size:
        char = glob[i]
        if nested and char in ",}":
            return "".join(out), i
        if char == "*":
            if glob.startswith("**", i):
                end = i + 2
                after = glob[end] if end < size else ""
                at_start = i == 0 or glob[i - 1] == "/" or (nested and glob[i - 1] in "{,")
                if at_start and after == "/":
                    out.append("(?:.*/)?")  # "**/": zero or more directories
                    i = end + 1
                    continue
                if at_start and (after == "" or (nested and after in ",}")):
                    if out and out[-1] == "/":
                        out[-1] = "/.+"  # ".../**": everything below
                    else:
                        out.append(".*")
                    i = end
                    continue
                i = end  # "a**b": like "*"
            else:
                i += 1
            out.append(f"{_SEGMENT_CHAR}*")
        elif char == "?":
            out.append(_SEGMENT_CHAR)
            i += 1
        elif char == "[":
            cls, i = _char_class(glob, i)
            out.append(cls)
        elif char == "{":
            alt, i = _alternatives(glob, i)
            out.append(alt)
        elif char == "\\" and i + 1 < size:
            out.append(re.escape(glob[i + 1]))
            i += 2
        elif char == "/":
            out.append("/")
            i += 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out), i


def _char_class(glob: str, i: int) -> tuple[str, int]:
    j = i + 1
    negate = j < len(glob) and glob[j] in "!^"
    if negate:
        j += 1
    start = j
    if j < len(glob) and glob[j] == "]":  # "[]abc]": a leading ] is a member
        j += 1
    while j < len(glob) and glob[j] != "]":
        j += 1
    if j >= len(glob):
        return re.escape("["), i + 1  # unclosed: a literal "["
    members = glob[start:j].replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
    members = members.replace("]", "\\]")
    if negate:
        return f"[^/{members}]", j + 1
    return f"(?!/)[{members}]", j + 1


def _alternatives(glob: str, i: int) -> tuple[str, int]:
    options: list[str] = []
    j = i + 1
    while True:
        part, j = _translate_part(glob, j, nested=True)
        options.append(part)
        if j >= len(glob):
            return re.escape("{"), i + 1  # unclosed: a literal "{"
        if glob[j] == "}":
            return "(?:" + "|".join(options) + ")", j + 1
        j += 1  # past ","


@dataclass(frozen=True)
class GlobSet:
    """Globs compiled to two regexes: ``**/NAME`` globs test the last segment only."""

    globs: tuple[str, ...]
    basename: re.Pattern[str] | None
    full: re.Pattern[str] | None

    def match(self, path: str) -> bool:
        if self.full is not None and self.full.fullmatch(path) is not None:
            return True
        if self.basename is None:
            return False
        return self.basename.fullmatch(path[path.rfind("/") + 1 :]) is not None


def _normalized(glob: str) -> str:
    while glob.startswith("./"):
        glob = glob[2:]
    glob = glob.lstrip("/")
    return glob + "**" if glob.endswith("/") else glob


def _alternation(parts: list[str]) -> re.Pattern[str] | None:
    if not parts:
        return None
    return re.compile("|".join(f"(?:{part})" for part in parts), re.DOTALL)


@lru_cache(maxsize=256)
def compile_globs(globs: tuple[str, ...]) -> GlobSet:
    """Compile once (cached): a path matches the set when any of ``globs`` matches it."""
    basename: list[str] = []
    full: list[str] = []
    for glob in globs:
        glob = _normalized(glob)
        rest = glob[3:]
        if glob.startswith("**/") and rest and "/" not in rest and "**" not in rest:
            basename.append(_translate(rest))  # "**/NAME": NAME is the last segment
        else:
            full.append(_translate(glob))
    return GlobSet(globs, _alternation(basename), _alternation(full))


def glob_regex(glob: str) -> str:
    """The anchored regex source of one glob (for docs and error messages)."""
    return rf"\A(?:{_translate(glob)})\Z"


def matches(path: str, globs: Sequence[str]) -> bool:
    return compile_globs(tuple(globs)).match(path)
