"""One test per glob rule (globs are anchored on the whole repository-relative path)."""

from __future__ import annotations

import pytest

from uh_core.diff.globs import compile_globs, glob_regex, matches


def test_anchored_on_the_whole_path() -> None:
    assert matches("src/app.py", ["src/app.py"])
    assert not matches("lib/src/app.py", ["src/app.py"])
    assert not matches("src/app.py.bak", ["src/app.py"])


def test_star_stays_inside_one_segment() -> None:
    assert matches("src/app.py", ["src/*.py"])
    assert not matches("src/pkg/app.py", ["src/*.py"])
    assert matches("src/.hidden.py", ["src/*.py"])  # a leading dot is not special
    assert matches("src/x", ["src/*"]) and matches("src/x", ["*/*"])


def test_question_mark_is_one_character_never_a_slash() -> None:
    assert matches("a1.txt", ["a?.txt"])
    assert not matches("a12.txt", ["a?.txt"])
    assert not matches("a/.txt", ["a?.txt"])


def test_double_star_slash_is_zero_or_more_directories() -> None:
    globs = ["**/test_*.py"]
    assert matches("test_a.py", globs)
    assert matches("pkg/test_a.py", globs)
    assert matches("a/b/c/test_a.py", globs)
    assert not matches("a/b/c/test_a.pyc", globs)


def test_double_star_in_the_middle_includes_no_directory() -> None:
    assert matches("a/b", ["a/**/b"])
    assert matches("a/x/y/b", ["a/**/b"])
    assert not matches("a/xb", ["a/**/b"])


def test_trailing_double_star_is_everything_below() -> None:
    assert matches("tests/a.py", ["tests/**"])
    assert matches("tests/deep/er/a.py", ["tests/**"])
    assert not matches("tests", ["tests/**"])
    assert not matches("tests.py", ["tests/**"])
    assert not matches("sub/tests/a.py", ["tests/**"])


def test_double_star_alone_matches_everything() -> None:
    assert matches("x", ["**"]) and matches("a/b/c", ["**"])


def test_double_star_inside_a_segment_is_a_star() -> None:
    assert matches("abxb", ["a**b"])
    assert not matches("a/b", ["a**b"])


def test_character_classes() -> None:
    assert matches("v1.txt", ["v[123].txt"])
    assert not matches("v4.txt", ["v[123].txt"])
    assert matches("vb.txt", ["v[a-c].txt"])
    assert matches("v4.txt", ["v[!123].txt"]) and matches("v4.txt", ["v[^123].txt"])
    assert not matches("v1.txt", ["v[!123].txt"])
    assert not matches("v/.txt", ["v[!123].txt"])  # never a slash
    assert matches("v].txt", ["v[]].txt"])
    assert matches("[x", ["[x"])  # unclosed: a literal


def test_braces_are_alternatives() -> None:
    globs = ["{src,lib}/**/*.{py,pyi}"]
    assert matches("src/a.py", globs) and matches("lib/x/a.pyi", globs)
    assert not matches("doc/a.py", globs) and not matches("src/a.pyc", globs)
    assert matches("b", ["{a,{b,c}}"])  # nested
    assert matches("x/conftest.py", ["{**/conftest.py,nothing}"])
    assert matches("{a", ["{a"])  # unclosed: a literal


def test_backslash_escapes_a_character() -> None:
    assert matches("a*b", ["a\\*b"]) and not matches("axb", ["a\\*b"])


def test_leading_slash_or_dot_slash_and_trailing_slash() -> None:
    assert matches("src/a.py", ["/src/*.py"])
    assert matches("src/a.py", ["./src/*.py"])
    assert matches("docs/x/y.md", ["docs/"])


def test_regex_characters_are_literal() -> None:
    assert matches("a+b(1).txt", ["a+b(1).txt"])
    assert not matches("aab(1).txt", ["a+b(1).txt"])


def test_case_sensitive_and_unicode() -> None:
    assert not matches("SRC/a.py", ["src/**"])
    assert matches("tests/café.py", ["tests/caf?.py"])
    assert matches("a\nb", ["a?b"])


@pytest.mark.parametrize(
    ("glob", "regex"),
    [("tests/**", r"\A(?:tests/.+)\Z"), ("**/x", r"\A(?:(?:.*/)?x)\Z")],
)
def test_compiled_form(glob: str, regex: str) -> None:
    assert glob_regex(glob) == regex


def test_compiled_once_and_cached() -> None:
    assert compile_globs(("a/**", "b")) is compile_globs(("a/**", "b"))
    assert not compile_globs(()).match("anything")


def test_basename_globs_and_full_path_globs_mix() -> None:
    globs = compile_globs(("**/conftest.py", "docs/**", "**/a/*.md"))
    assert globs.basename is not None and globs.full is not None
    assert globs.match("conftest.py") and globs.match("x/y/conftest.py")
    assert globs.match("docs/x") and globs.match("q/a/r.md") and globs.match("a/r.md")
    assert not globs.match("x/conftest.pyc") and not globs.match("a/b/r.md")
