"""Provider limits, recognised in what an agent CLI said: an outcome, not a failure.

A run that failed saying HTTP 429 (``status 429``, ``429 Too Many Requests``), "rate limit",
"too many requests", "usage limit reached" (or "… resets at …"), "quota exceeded" or
"resource exhausted" ended ``rate_limited``: the
provider refused it, the agent did nothing wrong. Every CLI words it its own way, in its
error line or the end of its stderr; ``detect`` reads them (never the whole stdout, where
an agent working on a rate limiter may well print the words). ``retry_after_s`` is when
the limit lifts, where the text says: ``Retry-After: 3``, ``retry after 3 s``, ``try again
in 20 seconds`` / ``in 2m``, ``resets at 2026-12-06T17:00:00Z`` (or at a Unix time).

The text is the agent's: a CLI (or a hostile agent) can claim a limit it did not hit. A
limit only ever makes the harness wait or hand the mission to another runtime, never
counts as a pass, and the waits are bounded by the run's time budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

_LIMIT = re.compile(
    r"too many requests|rate[ _-]?limit|usage limit|quota exceeded|resource[ _]exhausted|"
    r"(?:http|status|code|error)[ :=_/-]{0,3}429\b|\b429 too many",
    re.IGNORECASE,
)  # never a bare 429: a traceback's "line 429" is not a limit
_AFTER = re.compile(
    r"(?:retry[- ]after|try again in|retry in|retrying in|wait)\s*:?\s*"
    r"(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\b",
    re.IGNORECASE,
)
_RESETS = re.compile(
    r"resets? (?:at|on)\s+("
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"  # ISO 8601
    r"|\d{9,10})",  # a Unix time
    re.IGNORECASE,
)
_UNIT_S = {"ms": 0.001, "m": 60.0, "h": 3600.0}
MAX_WAIT_S = 6 * 3600.0  # a longer "reset" is not believed: the run's budget decides


@dataclass(frozen=True)
class RateLimit:
    message: str  # the line that said so (bounded)
    retry_after_s: float | None = None  # when it lifts, from now; None: not said


def detect(*texts: str | None, now: datetime | None = None) -> RateLimit | None:
    """The first text that says a provider limit stopped the run, with when it lifts."""
    for text in texts:
        if not text:
            continue
        found = _LIMIT.search(text)
        if found is None:
            continue
        line = _line_around(text, found.start())
        return RateLimit(line, retry_after(text, now))
    return None


def retry_after(text: str, now: datetime | None = None) -> float | None:
    """Seconds until the limit lifts, as the text says (None: it does not say)."""
    after = _AFTER.search(text)
    if after is not None:
        value = float(after.group(1))
        unit = (after.group(2) or "s").lower()
        key = "ms" if unit.startswith("ms") or unit.startswith("milli") else unit[0]
        seconds = value * _UNIT_S.get(key, 1.0)
        return min(seconds, MAX_WAIT_S)
    resets = _RESETS.search(text)
    if resets is not None:
        when = _moment(resets.group(1))
        if when is not None:
            moment = now or datetime.now(UTC)
            return min(max(0.0, (when - moment).total_seconds()), MAX_WAIT_S)
    return None


def _moment(text: str) -> datetime | None:
    if text.isdigit():
        return datetime.fromtimestamp(int(text), UTC)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "T"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _line_around(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    line = text[start : end if end != -1 else len(text)].strip()
    return line[:300]
