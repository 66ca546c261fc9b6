"""YAML text read with the position of every key and item (for errors that name a line).

One pass over libyaml's node tree builds the data and the positions together, and notes
duplicate keys (which PyYAML would silently let the last one win). PyYAML's constructor
ran a second pass over the same tree, through generators and a per-node dispatch; with the
single pass a 400-criterion mission reads in 17 ms instead of 27 ms (most of what is left
is composing the nodes). Anything it does not handle itself — merge keys (``<<``),
tags other than str/map/seq, a recursive alias — and the whole document goes through
PyYAML's own constructor instead, so the data is what ``yaml.safe_load`` gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import yaml

from uh_core.yamllimits import (
    YamlLimitError,
    check_graph,
    check_size,
    node_caps,
    too_deep,
    too_many_nodes,
)

# libyaml when present (several times faster); the pure-Python classes behave the same.
_LibYaml = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_RESOLVED: dict[tuple[str, tuple[bool, bool]], str] = {}  # a short plain scalar → its tag
_RESOLVED_MAX = 20_000


class _FastLoader(_LibYaml):  # type: ignore[misc,valid-type]
    """libyaml's loader with each short scalar's tag remembered: the composer asks PyYAML's
    resolver (a regex per candidate tag) for every scalar, and records repeat the same keys
    and values. The resolver is a pure function of its arguments (no path resolvers here)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is not yaml.ScalarNode or len(value) > 64:
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = _RESOLVED.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_RESOLVED) < _RESOLVED_MAX:
                _RESOLVED[key] = tag
        return tag


_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_VALUE = "tag:yaml.org,2002:value"  # what the resolver makes of a plain "="

Loc = tuple[str | int, ...]
_INT = "tag:yaml.org,2002:int"
_NO = object()
# What PyYAML's constructor makes of the commonest plain scalars, by (tag, text)
_SIMPLE: dict[tuple[str, str], Any] = {
    **{("tag:yaml.org,2002:null", text): None for text in ("", "~", "null", "Null", "NULL")},
    **{("tag:yaml.org,2002:bool", text): True for text in ("true", "True", "TRUE")},
    **{("tag:yaml.org,2002:bool", text): False for text in ("false", "False", "FALSE")},
    (_INT, "0"): 0,
}


class Position(NamedTuple):  # a tuple: a hundred thousand are made per thousand records
    line: int  # 1-based
    column: int  # 1-based


@dataclass
class YamlDocument:
    """Parsed YAML plus the position of every mapping key and sequence item.

    Positions serve errors (a file that validates never asks), so a document read without
    them keeps its ``text`` and finds them again, from the same parse, when first asked."""

    data: Any
    known: dict[Loc, Position] | None  # None: not found yet (``positions`` finds them)
    duplicates: list[tuple[Loc, Position]]
    text: str | None = None

    @property
    def positions(self) -> dict[Loc, Position]:
        if self.known is None:
            self.known = parse_yaml(self.text or "", positions=True).positions
        return self.known

    def position(self, loc: Loc) -> Position:
        """Position of the deepest known prefix of ``loc`` (or 1:1)."""
        for cut in range(len(loc), -1, -1):
            found = self.positions.get(tuple(loc[:cut]))
            if found is not None:
                return found
        return Position(1, 1)


class _Unhandled(Exception):
    """Something the single pass leaves to PyYAML's constructor."""


def _mark(node: yaml.Node) -> Position:
    return Position(node.start_mark.line + 1, node.start_mark.column + 1)


class _Untracked(Exception):
    """A build without positions met what needs them (a duplicate key)."""


class _Aliased(Exception):
    """A mapping or sequence met a second time: the graph is bounded (``check_graph``)
    before anything more is built."""


class _Builder:
    """Builds the data and positions in one pass. It visits every node as often as the data
    holds it, so on a tree (``shared=False``) its own count and depth are the caps' figures;
    a collection reached twice (an alias) stops it with ``_Aliased``."""

    def __init__(
        self, constructor: yaml.constructor.SafeConstructor, shared: bool, track: bool = True
    ) -> None:
        self.constructor = constructor
        self.track = track  # False: no positions; a duplicate key stops it (``_Untracked``)
        self.positions: dict[Loc, Position] = {}
        self.duplicates: list[tuple[Loc, Position]] = []
        self._open: set[int] = set()  # nodes being built: meeting one again is a cycle
        self._built: set[int] | None = None if shared else set()
        self.max_nodes, self.max_depth = node_caps()
        self.nodes = 0

    def build(self, node: yaml.Node, loc: Loc) -> Any:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise too_many_nodes(self.max_nodes)
        if len(loc) >= self.max_depth:
            raise too_deep(self.max_depth)
        tag = node.tag
        if tag == _STR and isinstance(node, yaml.ScalarNode):
            return node.value
        if isinstance(node, yaml.ScalarNode):
            simple = _SIMPLE.get((tag, node.value), _NO)  # the common null, true, false, 0…
            if simple is not _NO:
                return simple
            if (
                tag == _INT
                and node.value.isascii()
                and node.value.isdigit()
                and node.value[0] != "0"
            ):
                return int(node.value)  # decimal as written (0-led: octal in YAML 1.1)
            return self.constructor.construct_object(node)  # int, bool, null, float, date…
        if id(node) in self._open:
            raise _Unhandled("a recursive alias")
        if self._built is not None:
            if id(node) in self._built:
                raise _Aliased()
            self._built.add(id(node))
        self._open.add(id(node))
        try:
            if tag == _MAP and isinstance(node, yaml.MappingNode):
                return self._mapping(node, loc)
            if tag == _SEQ and isinstance(node, yaml.SequenceNode):
                out = []
                for index, item in enumerate(node.value):
                    child = (*loc, index)
                    if self.track:
                        self.positions[child] = _mark(item)
                    out.append(self.build(item, child))
                return out
            raise _Unhandled(tag)
        finally:
            self._open.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, loc: Loc) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise _Unhandled("a key that is not a scalar")
            self.nodes += 1  # a key is a node of its own (as check_graph counts it)
            if key_node.tag in (_STR, _VALUE):  # a bare "=" key is a string (as in PyYAML)
                key: Any = key_node.value
            elif key_node.tag == "tag:yaml.org,2002:merge":
                raise _Unhandled("a merge key")
            else:
                key = self.constructor.construct_object(key_node)
            child = (*loc, str(key_node.value))
            if self.track:
                mark = _mark(key_node)
                if key in out:
                    self.duplicates.append((child, mark))
                self.positions[child] = mark
            elif key in out:
                raise _Untracked()  # a duplicate is named with its line: build again, tracked
            out[key] = self.build(value_node, child)
        return out


def parse_yaml(text: str, *, positions: bool = False) -> YamlDocument:
    """Parse one YAML document. Raises yaml.YAMLError on bad syntax and ``YamlLimitError``
    past a cap (``uh_core.yamllimits``: size, expanded nodes, depth). Positions are found
    when first asked for (``YamlDocument.positions``), or now with ``positions=True``;
    duplicate keys are always found, with theirs.

    libyaml parses; on a syntax error the pure-Python parser runs again so the error
    carries its clearer wording and position.
    """
    check_size(len(text))
    try:
        try:
            return _parse_with(_FastLoader, text, positions)
        except yaml.YAMLError:
            if _LibYaml is yaml.SafeLoader:
                raise
        return _parse_with(yaml.SafeLoader, text, positions)
    except RecursionError:
        raise YamlLimitError(
            "the document nests too deeply to be read (the cap is UH_YAML_MAX_DEPTH)"
        ) from None


def _parse_with(
    loader_class: type[yaml.SafeLoader], text: str, positions: bool = True
) -> YamlDocument:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDocument(None, {}, [])
        # bounded as it is built while it is a tree; at its first alias, or anything left to
        # PyYAML, the whole graph is bounded first (uh_core.yamllimits)
        try:
            builder, data = _build(loader, node, False, positions)
        except _Aliased:
            check_graph(node)
            try:
                builder, data = _build(loader, node, True, positions)
            except _Unhandled:
                return _parse_slowly(loader, node)
        except _Unhandled:
            check_graph(node)
            return _parse_slowly(loader, node)
    finally:
        loader.dispose()
    if not builder.track:
        return YamlDocument(data, None, [], text)
    return YamlDocument(data, builder.positions, builder.duplicates)


def _build(
    loader: yaml.SafeLoader, node: yaml.Node, shared: bool, track: bool
) -> tuple[_Builder, Any]:
    if not track:
        builder = _Builder(loader, shared, track=False)
        try:
            return builder, builder.build(node, ())
        except _Untracked:
            pass  # a duplicate key: found again with the positions that name it
    builder = _Builder(loader, shared)
    builder.positions[()] = _mark(node)
    return builder, builder.build(node, ())


def _parse_slowly(loader: yaml.SafeLoader, node: yaml.Node) -> YamlDocument:
    """PyYAML's constructor for the data; positions from a walk over the same nodes."""
    positions: dict[Loc, Position] = {(): _mark(node)}
    duplicates: list[tuple[Loc, Position]] = []
    _walk(node, (), positions, duplicates, set())
    return YamlDocument(loader.construct_document(node), positions, duplicates)


def _walk(
    node: yaml.Node,
    loc: Loc,
    positions: dict[Loc, Position],
    duplicates: list[tuple[Loc, Position]],
    open_nodes: set[int],
) -> None:
    if id(node) in open_nodes:  # an alias inside itself
        return
    open_nodes.add(id(node))
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
            child = (*loc, key)
            if key in seen:
                duplicates.append((child, _mark(key_node)))
            seen.add(key)
            positions[child] = _mark(key_node)
            _walk(value_node, child, positions, duplicates, open_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = (*loc, index)
            positions[child] = _mark(item)
            _walk(item, child, positions, duplicates, open_nodes)
    open_nodes.discard(id(node))
