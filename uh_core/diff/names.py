"""File names as they appear in diff headers: C-quoting, prefixes, ``diff --git`` splitting.

Everything here works on bytes; names are decoded to ``str`` only at the end
(:func:`decode_path`), so quoting and prefix rules apply to the exact bytes git wrote.
"""

from __future__ import annotations

DEV_NULL = b"/dev/null"

_ESCAPES = {
    ord("a"): 7,
    ord("b"): 8,
    ord("t"): 9,
    ord("n"): 10,
    ord("v"): 11,
    ord("f"): 12,
    ord("r"): 13,
    ord('"'): 34,
    ord("\\"): 92,
}
_OCTAL = b"01234567"


def c_unquote(data: bytes, start: int = 0) -> tuple[bytes, int]:
    """Decode the C-quoted string at ``data[start]`` (which is ``"``).

    Returns the raw bytes and the index just past the closing quote. Octal escapes
    (``\\303\\251``) give raw bytes, so a UTF-8 name decodes back to its characters.
    An escape git never writes (``\\q``) is kept as written, backslash included: git itself
    keeps such a path (``git apply`` reads the field as an unquoted name) and so does the
    TypeScript uh; refusing the whole patch would lose every other path in it
    (docs/compat.md, "Diff paths"). Raises ValueError when the string is not closed.
    """
    if data[start : start + 1] != b'"':
        raise ValueError("not a quoted name")
    end = data.find(b'"', start + 1)
    if end < 0:
        raise ValueError("unterminated quoted name")
    if data.find(b"\\", start + 1, end) < 0:  # the common case: nothing escaped
        return data[start + 1 : end], end + 1
    out = bytearray()
    i = start + 1
    size = len(data)
    while True:
        slash = data.find(b"\\", i)
        if end < i:  # the quote found before was escaped: look again
            end = data.find(b'"', i)
            if end < 0:
                raise ValueError("unterminated quoted name")
        if slash < 0 or end < slash:
            out += data[i:end]
            return bytes(out), end + 1
        out += data[i:slash]
        code = data[slash + 1] if slash + 1 < size else -1
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i = slash + 2
        elif (
            slash + 3 < size
            and data[slash + 1] in _OCTAL
            and data[slash + 2] in _OCTAL
            and data[slash + 3] in _OCTAL
        ):
            out.append(int(data[slash + 1 : slash + 4], 8) & 0xFF)
            i = slash + 4
        elif code >= 0:  # not an escape git writes: kept literally
            out += data[slash : slash + 2]
            i = slash + 2
        else:
            raise ValueError("unterminated quoted name")


def header_name(field: bytes) -> bytes:
    """The name in a ``---``/``+++`` field: quoted, or up to the first tab.

    Git appends a tab to names holding a space; ``diff -u`` appends a tab and a timestamp.
    """
    if field.startswith(b'"'):
        return c_unquote(field)[0]
    tab = field.find(b"\t")
    return field if tab < 0 else field[:tab]


def unquote_whole(field: bytes) -> bytes:
    """A name that is the whole field (``rename from X``, ``diff --cc X``)."""
    if field.startswith(b'"'):
        return c_unquote(field)[0]
    return field


def common_name(old: bytes, new: bytes) -> bytes | None:
    """The longest ``N`` with ``old == P1 + N`` and ``new == P2 + N``.

    ``P1`` and ``P2`` are empty or end with ``/`` (``a/`` and ``b/``, custom prefixes,
    or none at all with ``--no-prefix``). None when the two do not name one file.
    """
    if old == new:
        return old
    slash = old.find(b"/")
    while slash >= 0:
        name = old[slash + 1 :]
        if name and new.endswith(name):
            cut = len(new) - len(name)
            if cut == 0 or new[cut - 1] == 0x2F:
                return name
        slash = old.find(b"/", slash + 1)
    return None


def split_git_line(rest: bytes, minus: bytes | None, plus: bytes | None) -> tuple[bytes, bytes]:
    """Split what follows ``diff --git `` into the old and new names (still prefixed).

    Quoted halves are unambiguous. Unquoted halves may hold spaces; the ``---``/``+++``
    names (when the section has them) or the rule that both halves name one file
    (prefixes aside) find the split. Raises ValueError when no split fits.
    """
    if rest.startswith(b'"'):
        first, end = c_unquote(rest)
        if rest[end : end + 1] != b" ":
            raise ValueError("expected a space after the first quoted name")
        return first, unquote_whole(rest[end + 1 :])
    if rest.endswith(b'"'):
        at = rest.find(b' "')
        while at >= 0:
            try:
                second, end = c_unquote(rest, at + 1)
            except ValueError:
                second, end = b"", -1
            if end == len(rest):
                return rest[:at], second
            at = rest.find(b' "', at + 1)
    if minus is not None and minus != DEV_NULL and rest.startswith(minus + b" "):
        return minus, rest[len(minus) + 1 :]
    if plus is not None and plus != DEV_NULL and rest.endswith(b" " + plus):
        return rest[: len(rest) - len(plus) - 1], plus
    best: tuple[bytes, bytes] | None = None
    best_len = -1
    space = rest.find(b" ")
    while space >= 0:
        old, new = rest[:space], rest[space + 1 :]
        name = common_name(old, new)
        if name is not None and len(name) > best_len:
            best, best_len = (old, new), len(name)
        space = rest.find(b" ", space + 1)
    if best is None:
        raise ValueError("cannot tell where the old name ends and the new one starts")
    return best


def strip_prefix(name: bytes, prefix: bytes) -> bytes:
    return name[len(prefix) :] if prefix and name.startswith(prefix) else name


def tidy(name: bytes) -> bytes:
    """Drop a leading ``./`` (``diff -u ./x ./y``)."""
    while name.startswith(b"./"):
        name = name[2:]
    return name


def decode_path(name: bytes) -> str:
    """Repository-relative path as text: UTF-8, other bytes kept visible as ``\\xNN``."""
    return name.decode("utf-8", "backslashreplace")
