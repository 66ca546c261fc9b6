"""Header names: C-quoting, the --- / +++ field, splitting "diff --git" without quotes."""

from __future__ import annotations

import pytest

from uh_core.diff.names import c_unquote, common_name, header_name, split_git_line


def test_c_unquote_escapes_and_octal_utf8() -> None:
    assert c_unquote(b'"caf\\303\\251"') == (b"caf\xc3\xa9", 13)
    assert c_unquote(b'"a\\tb\\n\\"q\\"\\\\"')[0] == b'a\tb\n"q"\\'
    assert c_unquote(b'"\\a\\b\\v\\f\\r"')[0] == b"\a\b\v\f\r"
    with pytest.raises(ValueError, match="unterminated"):
        c_unquote(b'"open')
    # an escape git never writes is kept as written (git keeps the path too): docs/compat.md
    assert c_unquote(b'"bad\\q"') == (b"bad\\q", 7)
    assert c_unquote(b'"x\\qy\\303\\251"')[0] == b"x\\qy\xc3\xa9"


def test_header_name_cuts_git_tab_and_diff_timestamps() -> None:
    assert header_name(b"a/with space.txt\t") == b"a/with space.txt"
    assert header_name(b"old/f.c\t2024-01-01 10:00:00.000000000 +0000") == b"old/f.c"
    assert header_name(b'"a/t\\tab"\t') == b"a/t\tab"


def test_common_name() -> None:
    assert common_name(b"a/x/y", b"b/x/y") == b"x/y"
    assert common_name(b"x", b"x") == b"x"
    assert common_name(b"left/side/x", b"right/x") == b"x"
    assert common_name(b"a/x", b"b/y") is None


@pytest.mark.parametrize(
    ("rest", "halves"),
    [
        (b"a/x b/x", (b"a/x", b"b/x")),
        (b"a/foo b/bar b/foo b/bar", (b"a/foo b/bar", b"b/foo b/bar")),  # " b/" in the name
        (b'"a/t\\tx" "b/t\\tx"', (b"a/t\tx", b"b/t\tx")),
        (b'a/plain "b/caf\\303\\251"', (b"a/plain", b"b/caf\xc3\xa9")),
        (b"x y x y", (b"x y", b"x y")),  # --no-prefix, a space in the name
    ],
)
def test_split_git_line(rest: bytes, halves: tuple[bytes, bytes]) -> None:
    assert split_git_line(rest, None, None) == halves


def test_split_git_line_uses_the_minus_name_and_refuses_nonsense() -> None:
    assert split_git_line(b"a/p q b/r s", b"a/p q", None) == (b"a/p q", b"b/r s")
    with pytest.raises(ValueError, match="cannot tell"):
        split_git_line(b"a/x b/y", None, None)
