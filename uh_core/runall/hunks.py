"""The runtimes' diffs hunk by hunk, for the consensus (runall/consensus.py).

A hunk is known by its file and what it changes — its removed and added lines, each with its
whitespace collapsed — never by where it sits: the same change at shifted lines, or with
other indentation, is one hunk. A hunk that changes whitespace only is left out (noise, not
a change two agents can agree on). A file section with no text hunk (binary, a mode change,
a pure rename) is one hunk, known by its header and body. Each hunk keeps the text of the
first runtime that made it, to be written into the consensus patch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from uh_core.errors import UhError


@dataclass
class Hunk:
    key: str  # what it changes (sha256 of the file and its normalised lines)
    file: str
    header: list[str]  # its file section's header lines ("index" lines dropped)
    source_start: int  # where the first maker put it, in the base's lines (0: a whole file)
    source_length: int
    lines: list[str]  # "@@" line's tail and body as the first maker wrote them
    changed: int  # lines removed and added
    runtimes: list[str] = field(default_factory=list)
    whole: bool = False  # a section with no text hunk: ``lines`` is the section, verbatim


def _normal(text: str) -> str:
    return " ".join(text.split())


def _sections(text: str) -> list[str]:
    """The patch's file sections, each starting at its ``diff --git`` line."""
    parts: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith("diff --git ") or not parts:
            parts.append(line)
        else:
            parts[-1] += line
    return [p for p in parts if p.startswith("diff --git ")]


def hunks_of(patch: Path, runtime: str) -> list[Hunk]:
    """Every hunk of one runtime's ``diff.patch``."""
    try:
        text = patch.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise UhError(f"{patch}: cannot read the runtime's diff: {exc.strerror}") from None
    found: list[Hunk] = []
    for section in _sections(text):
        try:
            files = PatchSet(section)
        except UnidiffParseError as exc:
            raise UhError(f"{patch}: not a diff uh can split into hunks: {exc}") from None
        for patched in files:
            header = [
                line if line.endswith("\n") else line + "\n"
                for line in section.split("@@", 1)[0].splitlines()
                if not line.startswith("index ")
            ]
            if not len(patched):  # binary, mode, rename: the section is the change
                kept = "".join(h for h in header if not h.startswith("diff --git "))
                body = kept + section.split("@@", 1)[1] if "@@" in section else kept
                key = hashlib.sha256(
                    f"{patched.path}\0{_normal(body)}".encode("utf-8", "surrogateescape")
                ).hexdigest()
                verbatim = section.splitlines(keepends=True)
                found.append(Hunk(key, patched.path, [], 0, 0, verbatim, 1, [runtime], True))
                continue
            header = [h for h in header if not h.startswith("@@")]
            for hunk in patched:
                removed = [_normal(x.value) for x in hunk if x.is_removed]
                added = [_normal(x.value) for x in hunk if x.is_added]
                if removed == added:
                    continue  # whitespace only
                digest = hashlib.sha256(patched.path.encode("utf-8", "surrogateescape"))
                for sign, said in (("-", removed), ("+", added)):
                    for line in said:
                        digest.update(f"\0{sign}{line}".encode("utf-8", "surrogateescape"))
                lines = [hunk.section_header, *(str(line) for line in hunk)]
                changed = len(removed) + len(added)
                start, length = hunk.source_start, hunk.source_length
                found.append(
                    Hunk(digest.hexdigest(), patched.path, header, start, length, lines, changed)
                )
                found[-1].runtimes.append(runtime)
    return found


def tally(per_runtime: dict[str, list[Hunk]]) -> list[Hunk]:
    """Every distinct hunk once, with the runtimes that made it (in the order given)."""
    seen: dict[str, Hunk] = {}
    for runtime, hunks in per_runtime.items():
        for hunk in hunks:
            known = seen.get(hunk.key)
            if known is None:
                seen[hunk.key] = hunk
            elif runtime not in known.runtimes:
                known.runtimes.append(runtime)
    return list(seen.values())


def render(chosen: list[Hunk]) -> tuple[str, list[str]]:
    """The patch of ``chosen`` (positions recomputed per file), and the overlaps that make
    it impossible to apply: ``path:line`` of each, named with the runtimes."""
    text: list[str] = []
    conflicts: list[str] = []
    by_file: dict[str, list[Hunk]] = {}
    for hunk in chosen:
        by_file.setdefault(hunk.file, []).append(hunk)
    for path in sorted(by_file):
        hunks = sorted(by_file[path], key=lambda h: h.source_start)
        whole = [h for h in hunks if h.whole]
        if whole:
            text += whole[0].lines
            if len(hunks) > 1:
                conflicts.append(f"{path}: a whole-file change beside other changes to it")
            continue
        text += hunks[0].header
        delta, end, last = 0, 0, None
        for hunk in hunks:
            if last is not None and hunk.source_start < end:
                conflicts.append(
                    f"{path}:{hunk.source_start}: the hunk of {', '.join(hunk.runtimes)} "
                    f"overlaps the hunk of {', '.join(last.runtimes)}"
                )
            kept = sum(1 for line in hunk.lines[1:] if line.startswith(("+", " ")))
            if hunk.source_length == 0:  # an insertion: after line source_start
                target = hunk.source_start + delta + 1
            elif kept == 0:  # everything removed
                target = hunk.source_start + delta - 1
            else:
                target = hunk.source_start + delta
            tail = f" {hunk.lines[0]}" if hunk.lines[0] else ""
            text.append(f"@@ -{hunk.source_start},{hunk.source_length} +{target},{kept} @@{tail}\n")
            text += hunk.lines[1:]
            delta += kept - hunk.source_length
            end, last = hunk.source_start + hunk.source_length, hunk
    return "".join(text), conflicts
