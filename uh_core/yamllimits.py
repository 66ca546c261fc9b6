"""Bounds on every YAML document uh reads, checked on the composed node graph before any
data is built: a few hundred bytes of nested aliases ("billion laughs") must be refused in
microseconds, not expanded into gigabytes; a thousand levels of ``[[[…]]]`` must be an error
line, not a ``RecursionError``.

- ``UH_YAML_MAX_BYTES`` (default 8 MiB): the file's size, checked before it is read;
- ``UH_YAML_MAX_NODES`` (default 200,000): nodes once every alias is expanded — what the
  data would hold (a 400-criterion mission has about 5,000);
- ``UH_YAML_MAX_DEPTH`` (default 64): nesting of mappings and sequences.

Each is raised by setting the variable; a refusal names the cap and the variable. JSON
documents (ledgers, caches, journals) are read through ``read_json`` under the same byte cap.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import yaml

DEFAULT_MAX_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_NODES = 200_000
DEFAULT_MAX_DEPTH = 64


class YamlLimitError(ValueError):
    """A document over one of the caps; ``str()`` is one bounded line with the fix."""


def _cap(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    try:
        number = int(value)
    except ValueError:
        return default
    return number if number > 0 else default


def max_bytes() -> int:
    return _cap("UH_YAML_MAX_BYTES", DEFAULT_MAX_BYTES)


def refuse(what: str, cap: int, variable: str) -> YamlLimitError:
    return YamlLimitError(f"{what} (the cap is {cap:,}; raise it with {variable}=N)")


def check_size(size: int) -> None:
    cap = max_bytes()
    if size > cap:
        raise refuse(f"the file is {size:,} bytes", cap, "UH_YAML_MAX_BYTES")


def check_graph(root: yaml.Node) -> None:
    """Expanded size and depth of the node graph, memoised per node (an alias is one node
    object reached many times), iteratively (no recursion to overflow)."""
    max_nodes = _cap("UH_YAML_MAX_NODES", DEFAULT_MAX_NODES)
    max_depth = _cap("UH_YAML_MAX_DEPTH", DEFAULT_MAX_DEPTH)
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        children = _children(node)
        if done:
            on_path.discard(key)
            known = [c for c in children if id(c) in sizes]  # a cycle's back edge is not
            sizes[key] = 1 + sum(sizes[id(c)] for c in known)
            depths[key] = 1 + max((depths[id(c)] for c in known), default=0)
            if sizes[key] > max_nodes:
                raise refuse(
                    f"the document expands to more than {max_nodes:,} nodes (aliases included)",
                    max_nodes,
                    "UH_YAML_MAX_NODES",
                )
            if depths[key] > max_depth:
                raise refuse(
                    f"the document nests deeper than {max_depth} levels", max_depth,
                    "UH_YAML_MAX_DEPTH",
                )  # fmt: skip
            continue
        if key in sizes or key in on_path:
            continue
        on_path.add(key)
        if len(on_path) > max_depth:
            raise refuse(
                f"the document nests deeper than {max_depth} levels", max_depth,
                "UH_YAML_MAX_DEPTH",
            )  # fmt: skip
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def read_json(path: Path) -> Any:
    """A JSON document within the same byte cap, its size checked before it is read; a
    nesting too deep to decode is a ``YamlLimitError`` too (never a ``RecursionError``).
    ``OSError``, ``UnicodeDecodeError`` and ``ValueError`` (bad JSON) go to the caller."""
    check_size(path.stat().st_size)
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except RecursionError:
        raise YamlLimitError(
            "the document nests too deeply to be read (the cap is UH_YAML_MAX_DEPTH)"
        ) from None
