"""User-facing docs cite nothing a package user does not have: no "contract §N", no issue
numbers, no ../shared/ paths."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FORBIDDEN = re.compile(r"contract §|§\s?\d|\.\./shared|\b[Ii]ssues? #?\d+|\bissue-\d+")


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_no_internal_citations(path: Path) -> None:
    found = [
        f"{path.name}:{number}: {match.group(0)}"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for match in [FORBIDDEN.search(line)]
        if match
    ]
    assert found == []


def test_quickstart_is_linked_first_from_the_readme() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)]+)\)", text)
    assert links[0] == "docs/quickstart.md"
