"""``required_test_modified``: did the agent change a test function that a ``tests:``
selector names? Loosening the judge is the cheapest way to a green, so a reviewer must hear
of it (and ``--strict-tests`` fails the attempt).

Compared by content: each named function's source (decorators included) on the base commit
against the worktree, for Python files the diff touches. New test functions are not
modifications; a deleted or rewritten one is.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from uh_core.git import run_git


@dataclass(frozen=True)
class Target:
    path: str
    qualname: str | None  # None: every test function of the file
    name: str | None = None  # a bare name: any function of that name in the file


def functions(source: str) -> dict[str, str] | None:
    """Qualified name → source lines (decorators included); None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    lines = source.splitlines()
    found: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                end = node.end_lineno or node.lineno
                found[prefix + node.name] = "\n".join(lines[start - 1 : end])

    visit(tree.body, "")
    return found


def targets(selector: str, touched_py: list[str]) -> list[Target]:
    if "::" in selector or selector.endswith(".py"):
        path, _, rest = selector.partition("::")
        if path not in touched_py:
            return []
        names = [part.split("[", 1)[0] for part in rest.split("::") if part]
        return [Target(path, ".".join(names) if names else None)]
    bare = selector.split("[", 1)[0]
    if "." not in bare and "/" not in bare:
        return [Target(path, None, bare) for path in touched_py]
    found = []
    for path in touched_py:
        module = path.removesuffix(".py").replace("/", ".")
        if bare.startswith(module + "."):
            found.append(Target(path, bare[len(module) + 1 :]))
    return found


def _chosen(target: Target, names: dict[str, str]) -> list[str]:
    if target.name is not None:
        return [q for q in names if q.rsplit(".", 1)[-1] == target.name]
    if target.qualname is not None:
        return [target.qualname] if target.qualname in names else []
    return [q for q in names if q.rsplit(".", 1)[-1].startswith("test")]


def _base_source(worktree: Path, base: str, path: str) -> str | None:
    shown = run_git(["show", f"{base}:{path}"], cwd=worktree, timeout=60)
    if shown.returncode != 0:
        return None  # a new file: nothing in it was modified
    return shown.stdout.decode("utf-8", "replace")


def modified_tests(
    worktree: Path,
    base: str,
    selectors: list[str],
    touched: list[str],
    repository: Path | None = None,
) -> list[tuple[str, str]]:
    """(selector, "path::qualname") for each named test function the agent changed; the
    base's text is read from ``repository`` (the operator's, never a sandbox's git)."""
    touched_py = [p for p in touched if p.endswith(".py")]
    cache: dict[str, tuple[dict[str, str] | None, dict[str, str] | None]] = {}
    changed: list[tuple[str, str]] = []
    for selector in selectors:
        for target in targets(selector, touched_py):
            if target.path not in cache:
                before_text = _base_source(repository or worktree, base, target.path)
                file = worktree / target.path
                after_text = file.read_text("utf-8", "replace") if file.is_file() else ""
                before = functions(before_text) if before_text is not None else {}
                cache[target.path] = (before, functions(after_text))
            before, after = cache[target.path]
            for qualname in _chosen(target, before or {}):
                if after is None or after.get(qualname) != (before or {})[qualname]:
                    pair = (selector, f"{target.path}::{qualname.replace('.', '::')}")
                    if pair not in changed:
                        changed.append(pair)
    return changed
