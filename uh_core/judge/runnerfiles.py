"""What a file the judge's commands run runs in turn: the judge reaches past its first file.

``make check`` names the ``Makefile``; its recipe runs ``python3 tools/check.py``, and an
agent that rewrote that script (leaving the ``Makefile`` alone) went green. So each runner
file a command names is read as the base commit has it — a ``Makefile``'s recipes and
includes (run in its folder), a shell script's lines, ``package.json``'s scripts — and
what those lines run (``commandfiles.command_files``) is the judge's too, to a bound.
What a check imports as a library is the product's, unless the operator protects it.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable

from uh_core.judge.commandfiles import RUNNER_FILES, files_of

LIMIT = 64  # files followed, in all
SIZE = 256_000  # characters of one runner file read


def through(named: frozenset[str], read: Callable[[str], str | None]) -> frozenset[str]:
    """``named`` and what those files run in turn, as the base commit has them (``read``:
    a file's text there, None when absent): a ``Makefile``'s recipes and includes, a shell
    script's lines, ``package.json``'s scripts — so ``make check`` protects the
    ``tools/check.py`` its recipe runs, not only the ``Makefile``. Bounded (``LIMIT`` files)."""
    found, todo = set(named), sorted(named)
    while todo and len(found) < LIMIT:
        path = todo.pop()
        text = read(path)
        if text is None or len(text) > SIZE:
            continue
        for more in _runs_inside(path, text) - found:
            found.add(more)
            todo.append(more)
    return frozenset(found)


def _runs_inside(path: str, text: str) -> frozenset[str]:
    """What one runner file runs, relative to the root."""
    name, folder = posixpath.basename(path), posixpath.dirname(path)
    lines: list[str] = []
    if name in RUNNER_FILES["make"] or name.endswith(".mk"):
        for line in text.splitlines():
            if line.startswith("\t"):  # a recipe line, run in the Makefile's folder
                lines.append(line[1:].lstrip("@-+ "))
            elif line.startswith(("include ", "-include ", "sinclude ")):
                lines += [f". {word}" for word in line.split()[1:]]
        return frozenset(posixpath.join(folder, f) for f in files_of([*lines]))
    if name == "package.json":
        try:
            scripts = json.loads(text).get("scripts", {})
        except (ValueError, AttributeError):
            return frozenset()
        lines = (
            [v for v in scripts.values() if isinstance(v, str)] if isinstance(scripts, dict) else []
        )
        return frozenset(posixpath.join(folder, f) for f in files_of([*lines]))
    if name.endswith((".sh", ".bash", ".env")) or (text.startswith("#!") and "sh" in text[:64]):
        lines = [
            line.split(" #", 1)[0]
            for line in text.splitlines()
            if not line.lstrip().startswith("#")
        ]
        return files_of([*lines])
    return frozenset()
