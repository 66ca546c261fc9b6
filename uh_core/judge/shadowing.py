"""The modules a judge's Python imports from the judged tree, before the judge's own.

A Python command puts the tree on ``sys.path`` (``python -m`` and ``-c`` put the working
folder first; ``PYTHONPATH=src`` adds ``src``), so a module the agent creates there under the
name of one the judge's own process imports — the standard library's, or the test runner's
(``pluggy.py`` beside ``python -m pytest``) — is imported in its place: ``shadowed`` names
such files, for ``judgefiles.judge_changes``. A module the base commit already has is the
project's own, and free.
"""

from __future__ import annotations

import re
import sys

from uh_core.judge.commandfiles import relative, words_of


def import_roots(commands: list[str | None]) -> tuple[str, ...]:
    """Folders of the tree the commands' Python imports from first: the root (``""``) and
    each ``PYTHONPATH`` entry assigned in them."""
    roots = [""]
    for command in commands:
        for word in words_of(command or ""):
            if word.startswith("PYTHONPATH="):
                for entry in word.split("=", 1)[1].split(":"):
                    path = relative(entry)
                    if path is not None and path not in roots:
                        roots.append(path)
    return tuple(roots)


# The test runners' own modules, imported by the judge's process before any test.
RUNNER_MODULES = frozenset(
    {"pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "exceptiongroup", "tomli"}
    | {"xdist", "coverage", "nose2", "hypothesis", "_hypothesis_pytestplugin"}
)
_IMPORTABLE = re.compile(
    r"\A([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z0-9_-]+)*\.(?:py|pyc|pyo|pyw|so|pyd)\Z"
)


def shadowed(path: str, roots: tuple[str, ...]) -> str | None:
    """The module of the standard library or the test runner that ``path`` (created in the
    tree) would be imported as, from one of ``roots``; None when it would not."""
    for root in roots:
        prefix = f"{root}/" if root else ""
        if not path.startswith(prefix):
            continue
        rest = path[len(prefix) :].split("/")
        if len(rest) == 1:
            found = _IMPORTABLE.match(rest[0])
            name = found.group(1) if found else None
        elif len(rest) == 2 and _IMPORTABLE.match(rest[1]) and rest[1].split(".")[0] == "__init__":
            name = rest[0]
        else:
            name = None
        if name is not None and (name in sys.stdlib_module_names or name in RUNNER_MODULES):
            return name
    return None
