"""Whole-file writes (temporary file, fsync, rename) and YAML text with positions.

Every YAML/JSON document the engine writes goes through ``write_text_atomic``, so a
reader never sees half a file and a crash never leaves one behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


def write_text_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# libyaml when present (several times faster); the pure-Python classes behave the same.
_BaseDumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_FastLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Block style, multi-line strings as literal blocks, keys in model order."""


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        # Literal blocks cannot hold trailing spaces on lines or some control characters;
        # PyYAML falls back to quoted style by itself when needed.
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_presenter)


def dump_yaml(data: Any) -> str:
    """Block-style YAML. Plain data (what the models dump) goes through ``yamlfast`` (the same
    text, several times faster); anything else through PyYAML."""
    from uh_core.yamlfast import dump

    fast = dump(data)
    return fast if fast is not None else dump_yaml_pyyaml(data)


def dump_yaml_pyyaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def write_yaml(path: Path, data: Any) -> None:
    write_text_atomic(path, dump_yaml(data))


def write_json(path: Path, data: Any) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


@dataclass
class YamlDocument:
    """Parsed YAML plus the position of every mapping key and sequence item."""

    data: Any
    positions: dict[Loc, Position]
    duplicates: list[tuple[Loc, Position]]

    def position(self, loc: Loc) -> Position:
        """Position of the deepest known prefix of ``loc`` (or 1:1)."""
        for cut in range(len(loc), -1, -1):
            found = self.positions.get(tuple(loc[:cut]))
            if found is not None:
                return found
        return Position(1, 1)


def _mark(node: yaml.Node) -> Position:
    return Position(node.start_mark.line + 1, node.start_mark.column + 1)


def _walk(
    node: yaml.Node,
    loc: Loc,
    positions: dict[Loc, Position],
    duplicates: list[tuple[Loc, Position]],
) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
            child = (*loc, key)
            if key in seen:
                duplicates.append((child, _mark(key_node)))
            seen.add(key)
            positions[child] = _mark(key_node)
            _walk(value_node, child, positions, duplicates)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            child = (*loc, index)
            positions[child] = _mark(item)
            _walk(item, child, positions, duplicates)


def parse_yaml(text: str) -> YamlDocument:
    """Parse one YAML document keeping positions. Raises yaml.YAMLError on bad syntax.

    libyaml parses; on a syntax error the pure-Python parser runs again so the error
    carries its clearer wording and position.
    """
    try:
        return _parse_with(_FastLoader, text)
    except yaml.YAMLError:
        if _FastLoader is yaml.SafeLoader:
            raise
    return _parse_with(yaml.SafeLoader, text)


def _parse_with(loader_class: type[yaml.SafeLoader], text: str) -> YamlDocument:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDocument(None, {}, [])
        positions: dict[Loc, Position] = {(): _mark(node)}
        duplicates: list[tuple[Loc, Position]] = []
        _walk(node, (), positions, duplicates)
        data = loader.construct_document(node)
    finally:
        loader.dispose()
    return YamlDocument(data, positions, duplicates)
