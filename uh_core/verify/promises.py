"""Promised but absent is a case (docs/verification.md, "Unverified promises").

A criterion without a check command, and a ``tests:`` selector that matches no test, are
promises nothing checks. They are listed — as ``blocked`` — in every summary (verify's lists
each criterion without a command; the harness's end-of-run summary and ``harness report``
list both), and ``mission validate`` warns about each. Nothing here runs a command: a
selector is looked up in the repository's files (a pytest node id or a dotted name names a
file, and a function or class defined in it); a bare name is looked for in ``test_*.py`` /
``*_test.py`` files. A selector whose form this cannot judge (a Cucumber scenario, a tag) is
left to the tests stage, which never passes a selector it did not see run.
"""

from __future__ import annotations

import re
from pathlib import Path

from uh_core.models.mission import Mission

_MAX_FILES = 5000  # test files looked through for a bare name


def _defines(text: str, name: str) -> bool:
    return (
        re.search(rf"^\s*(?:async\s+def|def|class)\s+{re.escape(name)}\b", text, re.M) is not None
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    except OSError:
        return None


def _test_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for pattern in ("test_*.py", "*_test.py"):
        for path in root.rglob(pattern):
            if ".harness" in path.parts or ".git" in path.parts or "node_modules" in path.parts:
                continue
            found.append(path)
            if len(found) >= _MAX_FILES:
                return found
    return found


def selector_problem(selector: str, root: Path, files: list[Path] | None = None) -> str | None:
    """Why ``selector`` matches no test in ``root``, or None (it does, or cannot be judged)."""
    if selector.startswith("@") or selector.endswith(".feature") or ".feature::" in selector:
        return None  # Cucumber: the tests stage judges it from the report
    head, _, rest = selector.partition("::")
    if head.endswith(".py"):
        text = _read(root / head)
        if text is None:
            return f"{head} does not exist"
        names = [part.split("[", 1)[0] for part in rest.split("::") if part]
        for name in names:
            if not _defines(text, name):
                return f"{head} defines no {name}"
        return None
    if "." in selector and "/" not in selector:  # dotted: tests.test_calc[.Class].test_add
        parts = selector.split(".")
        for cut in range(len(parts), 0, -1):
            text = _read(root / ("/".join(parts[:cut]) + ".py"))
            if text is not None:
                missing = [p for p in parts[cut:] if not _defines(text, p.split("[", 1)[0])]
                module = ".".join(parts[:cut])
                return f"{module} defines no {missing[0]}" if missing else None
        return None  # not a module path here: a classname the report may still use
    if re.fullmatch(r"[A-Za-z_]\w*", selector):  # a bare test name
        for path in files if files is not None else _test_files(root):
            text = _read(path)
            if text is not None and _defines(text, selector):
                return None
        return f"no test file defines {selector}"
    return None


def unverified_promises(mission: Mission, root: Path, *, block: bool = True) -> list[str]:
    """Every promise of ``mission`` that nothing checks, one line each (``block=False``:
    block criteria without a command left out, for a caller that already warns of them)."""
    lines = [
        f"acceptance criterion {ac.id} ({ac.severity}) has no check_command: nothing checks it"
        for ac in mission.criteria()
        if ac.check_command is None and (block or ac.severity != "block")
    ]
    files: list[Path] | None = None
    for selector in mission.tests:
        if files is None and re.fullmatch(r"[A-Za-z_]\w*", selector):
            files = _test_files(root)
        problem = selector_problem(selector, root, files)
        if problem is not None:
            lines.append(f"tests: selector {selector} matches no test ({problem})")
    return lines
