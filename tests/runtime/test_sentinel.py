"""The final-message sentinel: last complete block wins, CRLF and stray spaces tolerated."""

from __future__ import annotations

import pytest

from uh_core.adapters.sentinel import INSTRUCTION, TAG, extract_final_message

FENCE = "```"


def block(body: str, tag_suffix: str = "", newline: str = "\n") -> str:
    return newline.join([f"{FENCE}{TAG}{tag_suffix}", body, FENCE]) + newline


def test_none() -> None:
    assert extract_final_message("no block here\n```python\nx = 1\n```\n") is None
    assert extract_final_message("") is None


def test_one() -> None:
    assert extract_final_message("before\n" + block("the summary") + "after") == "the summary"


def test_several_last_wins() -> None:
    text = block("first") + "middle\n" + block("second\nline two")
    assert extract_final_message(text) == "second\nline two"


def test_crlf() -> None:
    assert extract_final_message(block("windows", newline="\r\n")) == "windows"


def test_unclosed_is_ignored() -> None:
    assert extract_final_message(f"{FENCE}{TAG}\nnever closed\n") is None
    assert extract_final_message(block("kept") + f"{FENCE}{TAG}\nunclosed") == "kept"


@pytest.mark.parametrize("suffix", ["  ", "\t", " \t "])
def test_trailing_spaces_after_the_tag(suffix: str) -> None:
    assert extract_final_message(block("spaced", suffix)) == "spaced"


def test_surrounding_whitespace_and_indented_fence() -> None:
    text = f"   {FENCE}{TAG}\n\n   indented body  \n\n   {FENCE}\n"
    assert extract_final_message(text) == "indented body"


def test_other_tags_are_not_the_sentinel() -> None:
    assert extract_final_message(f"{FENCE}{TAG}-extra\nno\n{FENCE}\n") is None


def test_instruction_shows_the_tag() -> None:
    assert f"{FENCE}{TAG}" in INSTRUCTION


# The rule shared with the TypeScript uh (docs/compat.md, "The sentinel").


def test_an_empty_block_is_no_message() -> None:
    assert extract_final_message(f"{FENCE}{TAG}\n{FENCE}\n") is None
    assert extract_final_message(f"{FENCE}{TAG}\n  \n\n{FENCE}\n") is None
    assert extract_final_message(block("kept") + f"{FENCE}{TAG}\n\n{FENCE}\n") == "kept"


def test_text_after_the_closing_fence() -> None:
    assert extract_final_message(f"{FENCE}{TAG}\nthe body\n{FENCE} done.\n") == "the body"


def test_opening_fence_after_text_on_its_line() -> None:
    text = f"Summary: {FENCE}{TAG}\nthe body\n{FENCE}\n"
    assert extract_final_message(text) == "the body"
    assert extract_final_message(f"see {FENCE}{TAG} here\nno\n{FENCE}\n") is None
