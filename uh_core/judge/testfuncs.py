"""``required_test_modified``: did the agent change a test function that a ``tests:``
selector names? Loosening the judge is the cheapest way to a green, so a reviewer must hear
of it (and ``--strict-tests`` fails the attempt).

Compared as Python resolves the test, in the Python files the diff touches: each module and
class body runs top to bottom (``if``/``try``/``with``/``for``/``while``/``match`` blocks
included) and every name keeps its FINAL binding — a ``def`` as its AST with decorators, a
``class`` as its bases, keywords and decorators, any other binding (assignment, walrus,
target, import, ``del``; ``Cls.name =``, ``setattr``, ``globals()[…] =``) as text; an
unresolved ``x.name =``, a ``global name`` or a later ``import *`` taints the name. A named
test is modified when its binding, an enclosing class's or a module/class ``pytestmark``
differs from the base's, when it is gone, or when the file no longer parses. Formatting and
comments do not count; new tests are not modifications.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from uh_core.git import run_git

DELETED = "deleted"
_NAMESPACES = ("globals", "locals", "vars")  # ``globals()["name"] = …`` binds ``name``


@dataclass(frozen=True)
class Target:
    path: str
    qualname: str | None  # None: every test function of the file
    name: str | None = None  # a bare name: any function of that name in the file


@dataclass(frozen=True)
class _Binding:
    text: str
    members: Scope | None = None  # a class's namespace, shared with its aliases


Scope = dict[str, _Binding]
Names = dict[str, str]  # qualified name → its final binding as text
Bindable = ast.expr | str  # a target, or a plain name
_dump = partial(ast.dump, include_attributes=False)  # line numbers do not matter


def _walrus(node: ast.AST) -> list[ast.NamedExpr]:
    """The ``:=`` of one statement evaluated in its own scope (not in nested bodies)."""
    inner = [c for c in ast.iter_child_nodes(node) if not isinstance(c, ast.stmt | ast.Lambda)]
    return [w for c in inner for w in [*_walrus(c), c] if isinstance(w, ast.NamedExpr)]


def _targets(node: ast.stmt) -> list[tuple[Bindable, str]]:
    """What one statement binds in its own scope before its blocks run, with the text."""
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [(target, f"assign:{_dump(node.value)}") for target in targets]
    if isinstance(node, ast.Delete):
        return [(target, DELETED) for target in node.targets]
    if isinstance(node, ast.For | ast.AsyncFor):
        return [(node.target, f"for:{_dump(node.iter)}")]
    if isinstance(node, ast.With | ast.AsyncWith):
        items = [(i.optional_vars, i.context_expr) for i in node.items]
        return [(var, f"with:{_dump(expr)}") for var, expr in items if var is not None]
    if isinstance(node, ast.Import):
        return [(a.asname or a.name.split(".")[0], f"module:{a.name}") for a in node.names]
    if isinstance(node, ast.ImportFrom):
        module = "." * node.level + (node.module or "")
        names = [a for a in node.names if a.name != "*"]
        return [(a.asname or a.name, f"import:{module}.{a.name}") for a in names]
    if isinstance(node, ast.Match):
        patterns = [p for case in node.cases for p in ast.walk(case.pattern)]
        captured = [getattr(p, "name", None) or getattr(p, "rest", None) for p in patterns]
        return [(n, f"match:{_dump(node.subject)}") for n in captured if n]
    call = node.value if isinstance(node, ast.Expr) else None
    if isinstance(call, ast.Call) and getattr(call.func, "id", "") in ("setattr", "delattr"):
        name = getattr(call.args[1], "value", None) if len(call.args) > 1 else None
        if isinstance(name, str):  # setattr(obj, "name", value) / delattr(obj, "name")
            value = f"assign:{_dump(call.args[2])}" if len(call.args) > 2 else DELETED
            return [(ast.Attribute(value=call.args[0], attr=name, ctx=ast.Store()), value)]
    if isinstance(getattr(node, "name", None), ast.Name):  # ``type X = …`` (3.12+)
        return [(getattr(node, "name"), f"assign:{_dump(node)}")]  # noqa: B009
    return []


class _Module:
    """Runs one module's statements for their bindings only."""

    def __init__(self) -> None:
        self.globals: Scope = {}
        self.taints: list[tuple[str, bool, str]] = []  # (name, top level only, text)

    def run(self, body: list[ast.stmt], scope: Scope) -> None:
        for node in body:
            for named in _walrus(node):
                self.bind(named.target, f"assign:{_dump(named.value)}", scope)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                scope[node.name] = _Binding(f"def:{_dump(node)}")
                continue
            if isinstance(node, ast.ClassDef):
                members: Scope = {}
                self.run(node.body, members)
                header = [*node.bases, *node.keywords, *node.decorator_list]
                text = f"class:{node.name}:" + ",".join(_dump(part) for part in header)
                scope[node.name] = _Binding(text, members)
                continue
            if isinstance(node, ast.AugAssign):
                before = self.find(node.target, scope)
                self.bind(node.target, f"aug:{_dump(node)}:{before and before.text}", scope)
            if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                for name, binding in scope.items():  # may rebind anything bound so far
                    scope[name] = replace(binding, text=f"{binding.text}|star:{node.module}")
            shared = self.find(node.value, scope) if isinstance(node, ast.Assign) else None
            for target, text in _targets(node):
                self.bind(target, text, scope, shared.members if shared else None)
            handlers = getattr(node, "handlers", [])
            for part in [node, *handlers, *getattr(node, "cases", [])]:
                self.run(getattr(part, "body", []), scope)
            self.run(getattr(node, "orelse", []) + getattr(node, "finalbody", []), scope)
            # Python unbinds ``except … as name`` once the handler is done
            scope.update({h.name: _Binding(DELETED) for h in handlers if h.name})

    def find(self, node: ast.expr, scope: Scope) -> _Binding | None:
        """What a name or an attribute chain through classes is bound to now."""
        if isinstance(node, ast.Name):
            return scope.get(node.id) or self.globals.get(node.id)
        if isinstance(node, ast.Attribute) and (owner := self.find(node.value, scope)):
            return (owner.members or {}).get(node.attr)
        return None

    def bind(self, target: Bindable, text: str, scope: Scope, shared: Scope | None = None) -> None:
        if isinstance(target, str | ast.Name):
            scope[target if isinstance(target, str) else target.id] = _Binding(text, shared)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self.bind(element, text, scope)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, text, scope)
        elif isinstance(target, ast.Attribute):
            owner = self.find(target.value, scope)
            if owner and owner.members is not None:
                owner.members[target.attr] = _Binding(text, shared)
            else:  # ``sys.modules[__name__].name = …``: any binding of that name is suspect
                self.taints.append((target.attr, False, f"attr:{text}"))
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Call):
            func, key = target.value.func, getattr(target.slice, "value", None)
            if isinstance(key, str) and isinstance(func, ast.Name) and func.id in _NAMESPACES:
                (self.globals if func.id == "globals" else scope)[key] = _Binding(text)


def _flatten(scope: Scope, prefix: str, out: Names) -> None:
    for name, binding in scope.items():
        out[prefix + name] = binding.text
        if binding.text.startswith("class:") and binding.members is not None:
            _flatten(binding.members, f"{prefix}{name}.", out)


def bindings(source: str) -> Names | None:
    """Qualified name → its final binding as text; None when the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    module = _Module()
    module.run(tree.body, module.globals)
    functions = [f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
    for function, node in [(f, node) for f in functions for node in ast.walk(f)]:
        if isinstance(node, ast.Global):  # the function may rebind these module names
            module.taints += [(name, True, f"global:{_dump(function)}") for name in node.names]
    found: Names = {}
    _flatten(module.globals, "", found)
    for name, top_only, text in module.taints:
        for qualname in found:
            if qualname == name or (not top_only and qualname.endswith("." + name)):
                found[qualname] += f"|{text}"
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


def _is_test(qualname: str, text: str) -> bool:
    return qualname.rsplit(".", 1)[-1].startswith("test") and text.startswith("def:")


def _chosen(target: Target, names: Names) -> list[str]:
    """The base's qualified names a target stands for (a named class: it and its tests)."""
    if target.name is None and target.qualname is None:
        return [q for q, text in names.items() if _is_test(q, text)]
    named = [q for q in names if target.qualname == q or target.name == q.rsplit(".", 1)[-1]]
    heads = tuple(f"{q}." for q in named if names[q] != DELETED)
    return [
        q for q, t in names.items() if f"{q}." in heads or (_is_test(q, t) and q.startswith(heads))
    ]


def changed(qualname: str, before: Names, after: Names | None) -> bool:
    """The test's own binding, an enclosing class's, or a ``pytestmark`` on the way differs."""
    scopes = [qualname.rsplit(".", n)[0] for n in range(1, qualname.count(".") + 1)]
    keys = [qualname, "pytestmark", *scopes, *(f"{s}.pytestmark" for s in scopes)]
    return after is None or any(before.get(key) != after.get(key) for key in keys)


def _versions(worktree: Path, repository: Path, base: str, path: str) -> tuple[Names, Names | None]:
    """The file's bindings on the base commit (none for a new file) and in the worktree."""
    shown = run_git(["show", f"{base}:{path}"], cwd=repository, timeout=60)
    before = bindings(shown.stdout.decode("utf-8", "replace")) if shown.returncode == 0 else {}
    file = worktree / path
    return before or {}, bindings(file.read_text("utf-8", "replace") if file.is_file() else "")


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
    cache: dict[str, tuple[Names, Names | None]] = {}
    found: list[tuple[str, str]] = []
    for selector in selectors:
        for target in targets(selector, touched_py):
            if target.path not in cache:
                cache[target.path] = _versions(worktree, repository or worktree, base, target.path)
            before, after = cache[target.path]
            for qualname in _chosen(target, before):
                if changed(qualname, before, after):
                    pair = (selector, f"{target.path}::{qualname.replace('.', '::')}")
                    if pair not in found:
                        found.append(pair)
    return found


def replaced(worktree: Path, base: str, where: str, repository: Path | None = None) -> bool:
    """Whether ``path::qualname`` (as ``modified_tests`` names it) is no longer a function at
    all: rebound to something else (``test_mul = _noop``), never a legitimate change."""
    path, _, rest = where.partition("::")
    _, after = _versions(worktree, repository or worktree, base, path)
    text = (after or {}).get(rest.replace("::", "."))
    return text is not None and not text.startswith("def:")
