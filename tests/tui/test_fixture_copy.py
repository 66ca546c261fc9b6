"""The workspace a test gets is a copy of one built once (conftest ``built``,
``fixtures.clone``): the copy is what a build at the test's own path writes, file for file."""

from __future__ import annotations

from pathlib import Path

from tests.tui import fixtures


def _files(root: Path) -> dict[str, tuple[int, bytes | None]]:
    """Every file and folder under ``root``: its mode and, for a file, its bytes."""
    return {
        str(path.relative_to(root)): (
            path.stat().st_mode,
            path.read_bytes() if path.is_file() else None,
        )
        for path in sorted(root.rglob("*"))
    }


def test_a_copy_is_the_build_at_its_path(built: Path, frozen: str, tmp_path: Path) -> None:
    # a path of another length than the template's: a rewrite that shifted bytes would show
    root = tmp_path / "a" / "longer" / "path" / "uh-tui-fixture"
    assert len(str(root)) != len(str(built))
    fixtures.clone(built, root)
    copied = _files(root)
    fixtures.build(root)
    assert copied == _files(root)
    assert any(data and str(root).encode() in data for _, data in copied.values())
    assert not any(data and str(built).encode() in data for _, data in copied.values())
