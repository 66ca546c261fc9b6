"""The fast emitter reads back as exactly what it was given (PyYAML's loader is the judge),
and gives way to PyYAML for anything it does not write."""

from __future__ import annotations

import math
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from uh_core.fileio import dump_yaml, dump_yaml_pyyaml
from uh_core.yamlfast import dump

TRICKY = ["yes", "No", "null", "~", "1.5", "0x1F", "- a", "a: b", "#x", " x", "x ", "a\n",
          "a\n\n", "\n", "é\u2028f", "\x85", "'", '"', "\\", "@a", "!a", "1:20", ".inf",
          "2026-01-01", "a:", "992bdb6", "1e3", "0o17", "+1", "-", "?", "%x", "`x"]  # fmt: skip
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from(TRICKY)
)
documents = st.dictionaries(
    st.text(),
    st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=20,
    ),
    min_size=1,
    max_size=6,
)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@settings(max_examples=600, deadline=None)
@given(documents)
def test_round_trips_through_pyyaml(doc: dict[str, Any]) -> None:
    text = dump(doc)
    assert text is not None
    assert _same(yaml.safe_load(text), doc), text


def test_looks_like_pyyaml_block_style() -> None:
    doc = {"id": "calc", "criteria": [{"id": "a", "status": "passed", "exit_code": 0}],
           "stdout": "line one\nline two\n", "empty": "", "none": None, "list": []}  # fmt: skip
    assert dump(doc) == dump_yaml_pyyaml(doc)  # the same text as before, for the usual cases


def test_gives_way_to_pyyaml() -> None:
    assert dump({"x": float("nan")}) is None
    assert dump({1: "a"}) is None
    assert dump({"x": object()}) is None
    assert dump([]) is None
    assert yaml.safe_load(dump_yaml({"x": float("inf")}))["x"] == float("inf")


def test_the_unsafe_classes_are_the_complement_of_yamls_printable_set() -> None:
    """Written as a small positive class (fast to compile); the same characters as the
    negated printable set, over every code point."""
    import re

    from uh_core import yamlfast

    printable = "\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"
    unsafe = re.compile(f"[^{printable}]")
    unsafe_block = re.compile(f"[^\n{printable}]")
    text = "".join(chr(c) for c in range(0x110000))
    assert yamlfast._UNSAFE.findall(text) == unsafe.findall(text)
    assert yamlfast._UNSAFE_BLOCK.findall(text) == unsafe_block.findall(text)
