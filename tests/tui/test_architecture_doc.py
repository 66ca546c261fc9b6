"""docs/architecture.md lists every module of uh_core and uh_tui: a top-level module by
name anywhere in its package's section, a module in a folder in that folder's row."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"


def _section(text: str, package: str) -> str:
    found = re.search(rf"^## {package}\b.*?(?=^## |\Z)", text, flags=re.M | re.S)
    assert found, f"docs/architecture.md has no '## {package}' section"
    return found.group(0)


def _rows(section: str) -> dict[str, str]:
    """First cell → the whole row, for each table row whose first cell names a folder."""
    rows: dict[str, str] = {}
    for line in section.splitlines():
        cell = re.match(r"^\| `([\w/]+/)` \|", line)
        if cell:
            rows[cell.group(1)] = line
    return rows


def missing(package: str) -> list[str]:
    section = _section(DOC.read_text(encoding="utf-8"), package)
    rows = _rows(section)
    base = ROOT / package
    gone = []
    for path in sorted([*base.rglob("*.py"), *base.rglob("*.tcss")]):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(base)
        if len(relative.parts) == 1:
            if f"`{path.name}`" not in section:
                gone.append(str(relative))
            continue
        folder = f"{relative.parent.as_posix()}/"
        if f"`{path.name}`" not in rows.get(folder, ""):
            gone.append(f"{package}/{relative} (in the `{folder}` row)")
    return gone


def test_every_uh_core_module_is_in_the_architecture_doc() -> None:
    assert missing("uh_core") == []


def test_every_uh_tui_module_is_in_the_architecture_doc() -> None:
    assert missing("uh_tui") == []
