"""A YAML emitter for the engine's own documents: plain data from ``model_dump(mode="json")``.

PyYAML spends most of a dump in its Python representer and resolver (73 ms for a 300-criterion
verification result, libyaml's emitter included: a quarter of verify's own cost per
criterion). The documents the engine writes are only dicts with string keys, lists, strings,
numbers, booleans and None, so this writes them directly, in PyYAML's block style:

- a string is plain only when its characters cannot start or break a plain scalar and YAML's
  own resolver reads it back as that string (so ``yes``, ``1.5``, ``2026-01-01`` are quoted);
  else single-quoted when it has only printable characters on one line; else a literal block
  (``|``) when every line is safe for one; else double-quoted with escapes;
- anything else (another type, a non-string key, a float that is not finite) → ``None``, and
  the caller uses PyYAML.

``yaml.safe_load(dump(x)) == x`` for every document it accepts (tests/test_yamlfast.py checks
it with hypothesis against PyYAML's loader).
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

# A plain scalar's shape (no indicator first, no "#", no quotes); it is written plain only
# when YAML's own resolver reads it back as a string (not a number, date, bool, null)
_PLAIN = re.compile(r"[A-Za-z0-9_./][A-Za-z0-9_./:-]*(?: [A-Za-z0-9_./()-]+)*\Z")
_RESOLVER = yaml.resolver.Resolver()
_STR = "tag:yaml.org,2002:str"
# YAML's printable set, minus line breaks other than \n and the BOM (not to appear raw here):
# \x20-\x7e \xa0-\u2027 \u202a-\ud7ff \ue000-\ufefe \uff00-\ufffd \U00010000-\U0010ffff.
# Written as its complement: a negated class over those ranges took 9 ms to compile, each.
_NOT_PRINTABLE = r"\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff"
_UNSAFE = re.compile(rf"[\n{_NOT_PRINTABLE}]")
_UNSAFE_BLOCK = re.compile(rf"[{_NOT_PRINTABLE}]")
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


class Unsupported(Exception):
    """A value this emitter does not write: PyYAML does."""


def _double(text: str) -> str:
    out = []
    for char in text:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif _UNSAFE.match(char):
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                       else f"\\U{code:08x}")  # fmt: skip
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


_SEEN: dict[str, str] = {}  # short strings already decided: keys and statuses repeat a lot
_SEEN_MAX = 8192
_SEEN_LEN = 64


def _scalar_str(text: str) -> str:
    known = _SEEN.get(text)
    if known is not None:
        return known
    written = _decide(text)
    if len(text) <= _SEEN_LEN and len(_SEEN) < _SEEN_MAX:
        _SEEN[text] = written
    return written


def _decide(text: str) -> str:
    if (
        _PLAIN.match(text)
        and ": " not in text
        and not text.endswith(":")
        and _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) == _STR  # type: ignore[no-untyped-call]
    ):
        return text
    if "\n" not in text and not _UNSAFE.search(text):
        return "'" + text.replace("'", "''") + "'"
    return _double(text)


def _block(text: str, indent: str) -> str | None:
    """``|`` block lines for a multi-line string, or None when a block cannot hold it."""
    if _UNSAFE_BLOCK.search(text) or text.startswith((" ", "\n")):
        return None
    body = text[:-1] if text.endswith("\n") else text
    if body.endswith("\n"):
        return None  # several trailing newlines: keep it simple, quote it
    lines = body.split("\n")
    if any(line != line.rstrip(" ") for line in lines):
        return None
    head = "|" if text.endswith("\n") else "|-"
    return head + "".join(f"\n{indent}{line}" if line else "\n" for line in lines)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Unsupported(value)
        return _float(repr(value))
    if isinstance(value, str):
        return _scalar_str(value)
    raise Unsupported(type(value).__name__)


def _float(text: str) -> str:
    # YAML 1.1 (PyYAML) floats need a dot and a signed exponent: 1e-05 → 1.0e-05
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    if exponent and exponent[0] not in "+-":
        exponent = "+" + exponent
    return f"{mantissa}e{exponent}" if exponent else mantissa


def _emit(value: Any, indent: str, out: list[str]) -> None:
    """``value`` as the lines after a ``key:`` or ``-`` (already written), at ``indent``."""
    if isinstance(value, dict):
        if not value:
            out.append(" {}")
            return
        for key, item in value.items():
            if not isinstance(key, str):
                raise Unsupported("key")
            out.append(f"\n{indent}{_scalar_str(key)}:")
            _value(item, indent, out, in_list=False)
    elif isinstance(value, list):
        if not value:
            out.append(" []")
            return
        for item in value:
            out.append(f"\n{indent}-")
            _value(item, indent + "  ", out, in_list=True)
    else:
        raise Unsupported(type(value).__name__)


def _value(item: Any, indent: str, out: list[str], *, in_list: bool) -> None:
    if isinstance(item, dict) and item:
        if in_list:  # "- key: value" with the rest of the mapping under it
            first = len(out)
            _emit(item, indent, out)
            out[first] = " " + out[first].lstrip("\n").lstrip(" ")
        else:
            _emit(item, indent + "  ", out)
    elif isinstance(item, dict | list):  # a list at the key's own indent, or [] / {}
        _emit(item, indent, out)
    elif isinstance(item, str) and "\n" in item:
        block = _block(item, indent + ("" if in_list else "  "))
        out.append(" " + (block if block is not None else _double(item)))
    else:
        out.append(" " + _scalar(item))


def dump(data: Any) -> str | None:
    """``data`` (a dict of plain data) as YAML text, or None when PyYAML must write it."""
    if not isinstance(data, dict) or not data:
        return None
    out: list[str] = []
    try:
        _emit(data, "", out)
    except Unsupported:
        return None
    return "".join(out).lstrip("\n") + "\n"
