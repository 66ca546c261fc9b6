"""Ids are slugs: checked before any file is touched."""

from __future__ import annotations

import re

from uh_core.errors import InvalidIdError

SLUG_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]*"
_SLUG = re.compile(rf"\A{SLUG_PATTERN}\Z")


def is_slug(value: object) -> bool:
    return isinstance(value, str) and bool(_SLUG.match(value)) and ".." not in value


def slug_problem(value: object) -> str | None:
    """Why ``value`` is not a valid id, or None when it is one."""
    if not isinstance(value, str):
        return f"must be a string, not {type(value).__name__}"
    if not value:
        return "is empty"
    if "/" in value or "\\" in value:
        return "contains a path separator"
    if ".." in value:
        return "contains '..'"
    if not _SLUG.match(value):
        if "<" in value or ">" in value:
            return "is a template placeholder (replace the <...> part)"
        return f"is not a slug ({SLUG_PATTERN})"
    return None


def check_id(value: object, kind: str = "mission") -> str:
    """Return ``value`` if it is a valid ``kind`` id, else raise InvalidIdError naming it."""
    problem = slug_problem(value)
    if problem is not None:
        raise InvalidIdError(
            f"invalid {kind} id {value!r}: {problem}",
            fix="use letters, digits, '.', '_' and '-' only, starting with a letter or digit",
        )
    assert isinstance(value, str)
    return value


def safe_filename(text: str, *, limit: int = 60) -> str:
    """A filesystem-safe rendering of free text (check names), never empty."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")
    cleaned = cleaned.replace("..", ".")
    return (cleaned or "item")[:limit]
