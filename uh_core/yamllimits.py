"""Bounds on every YAML document uh reads, checked on the composed node graph before any
data is built: a few hundred bytes of nested aliases ("billion laughs") must be refused in
microseconds, not expanded into gigabytes; a thousand levels of ``[[[…]]]`` must be an error
line, not a ``RecursionError``.

- ``UH_YAML_MAX_BYTES`` (default 8 MiB): the file's size, checked before it is read;
- ``UH_YAML_MAX_NODES`` (default 200,000): nodes once every alias is expanded — what the
  data would hold (a 400-criterion mission has about 5,000);
- ``UH_YAML_MAX_DEPTH`` (default 64): nesting of mappings and sequences.

A document with no alias is a tree: ``uh_core.yamldoc`` counts its nodes and depth while it
builds the data (``node_caps``, ``too_many_nodes``, ``too_deep``: the same caps and lines),
and runs ``check_graph`` only once it meets a node a second time (an alias), before building
any more — a bomb is still refused before it expands.

Each is raised by setting the variable; a refusal names the cap and the variable. JSON
documents (ledgers, caches, journals, run registrations, run-all's comparison) are read through
``read_json`` under the same byte cap; a JSON Lines file (one document a line) is read line by
line through ``read_json_lines``/``loads_json``, each line under that cap. JSON nested too deep
to decode is refused the same way (never a ``RecursionError``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

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


def node_caps() -> tuple[int, int]:
    """``(most nodes, deepest nesting)`` a document may expand to."""
    nodes = _cap("UH_YAML_MAX_NODES", DEFAULT_MAX_NODES)
    return nodes, _cap("UH_YAML_MAX_DEPTH", DEFAULT_MAX_DEPTH)


def too_many_nodes(max_nodes: int) -> YamlLimitError:
    return refuse(
        f"the document expands to more than {max_nodes:,} nodes (aliases included)",
        max_nodes,
        "UH_YAML_MAX_NODES",
    )


def too_deep(max_depth: int) -> YamlLimitError:
    return refuse(
        f"the document nests deeper than {max_depth} levels", max_depth, "UH_YAML_MAX_DEPTH"
    )


def check_graph(root: yaml.Node) -> None:
    """Expanded size and depth of the node graph, memoised per node (an alias is one node
    object reached many times), iteratively (no recursion to overflow)."""
    max_nodes, max_depth = node_caps()
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
                raise too_many_nodes(max_nodes)
            if depths[key] > max_depth:
                raise too_deep(max_depth)
            continue
        if key in sizes or key in on_path:
            continue
        on_path.add(key)
        if len(on_path) > max_depth:
            raise too_deep(max_depth)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


_TOO_DEEP = "the document nests too deeply to be read (the cap is UH_YAML_MAX_DEPTH)"


def loads_json(text: str | bytes) -> Any:
    """One JSON document already in memory (a file's text, a line of a JSON Lines file),
    within the byte cap; nesting too deep to decode is a ``YamlLimitError``. Bad JSON is a
    ``ValueError`` (``json.JSONDecodeError``), bytes that are not UTF-8 a
    ``UnicodeDecodeError`` (a ``ValueError`` too)."""
    check_size(len(text))
    try:
        # Strict UTF-8: json.loads on bytes would also accept UTF-16/32.
        return json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
    except RecursionError:
        raise YamlLimitError(_TOO_DEEP) from None


def read_json(path: Path) -> Any:
    """A JSON document within the same byte cap, its size checked before it is read (and
    never more than the cap read, should it grow meanwhile); a nesting too deep to decode is
    a ``YamlLimitError`` too (never a ``RecursionError``). ``OSError``,
    ``UnicodeDecodeError`` and ``ValueError`` (bad JSON) go to the caller."""
    return loads_json(read_capped(path))


def read_capped(path: Path) -> bytes:
    """A file's bytes within the byte cap, its size checked before it is read (and never
    more than the cap read, should it grow meanwhile)."""
    cap = max_bytes()
    with open(path, "rb") as handle:
        check_size(os.fstat(handle.fileno()).st_size)
        data = handle.read(cap + 1)
    check_size(len(data))
    return data


class _Bad:
    """A line of a JSON Lines file that is not JSON (``read_json_lines``)."""

    def __repr__(self) -> str:
        return "BAD"


BAD: Any = _Bad()


def read_json_lines(path: Path, *, tolerant: bool = False) -> Iterator[tuple[int, Any]]:
    """``(line number, document)`` for each non-blank line of a JSON Lines file, the file
    streamed: no line longer than the byte cap is read whole. A line that is not JSON is
    ``(number, BAD)`` — the caller skips or refuses it — so one torn line does not hide the
    rest. A line over the byte cap or nested too deeply is a ``YamlLimitError`` naming the
    line; with ``tolerant`` (a log other writers share) it is ``BAD`` too."""
    cap = max_bytes()
    with open(path, "rb") as handle:
        number = 0
        while line := handle.readline(cap + 1):
            number += 1
            try:
                if len(line) > cap and not line.endswith(b"\n"):
                    if tolerant:
                        _skip_line(handle, cap)
                    raise refuse(f"it is over {cap:,} bytes", cap, "UH_YAML_MAX_BYTES")
                if not line.strip():
                    continue
                yield number, loads_json(line.rstrip(b"\r\n"))
            except YamlLimitError as exc:
                if not tolerant:
                    raise YamlLimitError(f"line {number}: {exc}") from None
                yield number, BAD
            except ValueError:
                yield number, BAD


def _skip_line(handle: BinaryIO, chunk: int) -> None:
    """Read past the rest of an over-long line, keeping none of it."""
    while part := handle.readline(chunk):
        if part.endswith(b"\n"):
            return
