"""Reading YAML with positions: the data is exactly ``yaml.safe_load``'s, whichever pass built
it, and every key and item has its line and column."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from uh_core import yamldoc
from uh_core.fileio import dump_yaml_pyyaml
from uh_core.yamldoc import Position, parse_yaml

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.sampled_from(["yes", "~", "0x1F", "1:20", "2026-01-01", "2026-01-01 10:00:00", ".inf"])
)
trees = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text() | st.integers() | st.booleans(), inner, max_size=4)
    ),
    max_leaves=25,
)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(trees)
def test_data_is_what_safe_load_gives(value: Any) -> None:
    text = dump_yaml_pyyaml({"doc": value})
    assert _same(parse_yaml(text).data, yaml.safe_load(text))


def test_positions_of_keys_and_items() -> None:
    text = "id: m\nacceptance_criteria:\n  - id: a\n    check_command: 'true'\n  - id: b\n"
    doc = parse_yaml(text)
    assert doc.positions[()] == Position(1, 1)
    assert doc.positions[("id",)] == Position(1, 1)
    assert doc.positions[("acceptance_criteria",)] == Position(2, 1)
    assert doc.positions[("acceptance_criteria", 0)] == Position(3, 5)
    assert doc.positions[("acceptance_criteria", 0, "check_command")] == Position(4, 5)
    assert doc.positions[("acceptance_criteria", 1, "id")] == Position(5, 5)
    assert doc.position(("acceptance_criteria", 1, "nope", 3)) == Position(5, 5)
    assert doc.duplicates == []


@settings(max_examples=100, deadline=None)
@given(trees)
def test_positions_found_when_asked_are_those_found_at_once(value: Any) -> None:
    """A document read without positions (the usual read: nothing failed) finds the same
    positions when first asked as a read that kept them."""
    text = dump_yaml_pyyaml({"doc": value, "more": [value, {"k": value}]})
    lazy, eager = parse_yaml(text), parse_yaml(text, positions=True)
    assert lazy.known is None and eager.known is not None
    assert lazy.positions == eager.positions and lazy.duplicates == eager.duplicates == []
    assert _same(lazy.data, eager.data)


def test_duplicate_keys_are_noted_and_the_last_wins_as_in_pyyaml() -> None:
    doc = parse_yaml("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n")
    assert doc.data == {"a": 3, "b": {"c": 2}} == yaml.safe_load("a: 1\nb:\n  c: 1\n  c: 2\na: 3\n")
    assert doc.duplicates == [(("b", "c"), Position(4, 3)), (("a",), Position(5, 1))]


@pytest.mark.parametrize(
    "text",
    [
        "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n",  # a merge key
        "tagged: !!set {a, b}\n",  # a tag the single pass leaves to PyYAML
        "pairs: !!omap [{a: 1}, {b: 2}]\n",
        "? [a, b]\n: complex key\n",  # unhashable key: PyYAML's own error
        "shared: &s [1, 2]\nagain: *s\n",  # an alias (not recursive): built twice, same data
        "when: 2026-01-02\nbin: !!binary aGVsbG8=\n",
    ],
)
def test_what_the_single_pass_leaves_to_pyyaml_gives_the_same(text: str) -> None:
    try:
        expected = yaml.safe_load(text)
    except yaml.YAMLError:
        with pytest.raises(yaml.YAMLError):
            parse_yaml(text)
        return
    doc = parse_yaml(text)
    assert doc.data == expected
    assert doc.positions[()] == Position(1, 1)


def test_a_recursive_alias_does_not_loop() -> None:
    doc = parse_yaml("a: &x\n  - 1\n  - *x\n")
    inner = doc.data["a"]
    assert inner[0] == 1 and inner[1] is inner  # PyYAML's recursive list
    assert doc.positions[("a", 1)] == Position(1, 4)  # an alias is its anchor's node


def test_a_merge_key_takes_the_slow_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    slow: list[bool] = []
    original = yamldoc._parse_slowly

    def spy(loader: Any, node: Any) -> yamldoc.YamlDocument:
        slow.append(True)
        return original(loader, node)

    monkeypatch.setattr(yamldoc, "_parse_slowly", spy)
    parse_yaml("plain: text\n")
    assert slow == []
    assert parse_yaml("b: &b {x: 1}\nd:\n  <<: *b\n").data == {"b": {"x": 1}, "d": {"x": 1}}
    assert slow == [True]


def test_empty_and_scalar_documents() -> None:
    assert parse_yaml("").data is None
    assert parse_yaml("# only a comment\n").data is None
    assert parse_yaml("just text\n").data == "just text"


def test_compat_missions_read_the_same_as_safe_load(compat: Path) -> None:
    for path in sorted(compat.rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert parse_yaml(text).data == yaml.safe_load(text), path


def test_a_bare_equals_sign_key_is_a_string_as_in_pyyaml() -> None:
    """The resolver tags a plain "=" as ``value``; as a key PyYAML makes it a string."""
    for text in ("flags:\n  =: equals\n", "{=: 1}\n", "? =\n: x\n"):
        assert parse_yaml(text).data == yaml.safe_load(text)
    assert parse_yaml("flags:\n  =: equals\n").positions[("flags", "=")] == Position(2, 3)
