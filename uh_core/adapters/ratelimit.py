"""Provider limits, recognised in what an agent CLI said: an outcome, not a failure.

A run that failed saying HTTP 429 (``status 429``, ``429 Too Many Requests``), "rate limit",
"too many requests", "usage limit reached" (or "… resets at …"), "quota exceeded" or
"resource exhausted" ended ``rate_limited``: the
provider refused it, the agent did nothing wrong. Every CLI words it its own way, in its
error line or the end of its stderr; ``detect`` reads them (never the whole stdout, where
an agent working on a rate limiter may well print the words). ``retry_after_s`` is when
the limit lifts, where the text says: ``Retry-After: 3``, ``retry after 3 s``, ``try again
in 20 seconds`` / ``in 2m`` / ``in 1m12.5s`` (OpenAI's), ``retry-after-ms=3000`` (omp's),
``resets at 2026-12-06T17:00:00Z`` (or at a Unix time), ``Try again at 5:17 PM.`` / ``at Dec
7th, 2026 5:17 PM.`` (codex's, local time to the minute: the end of that minute is taken).

The text is the agent's: a CLI (or a hostile agent) can claim a limit it did not hit. A
limit only ever makes the harness wait or hand the mission to another runtime, never
counts as a pass, and the waits are bounded by the run's time budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time

_LIMIT = re.compile(
    r"too many requests|rate[ _-]?limit|usage limit|quota exceeded|resource[ _]exhausted|"
    r"(?:http|status|code|error)[ :=_/-]{0,3}429\b|\b429 too many",
    re.IGNORECASE,
)  # never a bare 429: a traceback's "line 429" is not a limit
_UNITS = r"ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hours?"
_PART = re.compile(rf"(\d+(?:\.\d+)?)\s*({_UNITS})?(?![a-z])", re.IGNORECASE)
_AFTER = re.compile(
    r"(?:retry[- ]after|try again in|retry in|retrying in|wait)\s*:?\s*"
    rf"(\d+(?:\.\d+)?\s*(?:{_UNITS})?(?![a-z])(?: ?\d+(?:\.\d+)?(?:{_UNITS})(?![a-z]))*)",
    re.IGNORECASE,
)  # one amount ("3", "20 seconds") or several with units ("1m12.864s", "1h 30m")
# omp appends the provider's Retry-After header to its error: "… retry-after-ms=3000"
_AFTER_MS = re.compile(r"\bretry-after-ms\s*[:=]\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
_RESETS = re.compile(
    r"resets? (?:at|on)\s+("
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"  # ISO 8601
    r"|\d{9,10})",  # a Unix time
    re.IGNORECASE,
)
_CLOCK = re.compile(  # codex: "Try again at 5:17 PM." / "… at Dec 7th, 2026 5:17 PM."
    r"try again at\s+(?:(?P<date>[a-z]{3} \d{1,2})(?:st|nd|rd|th)?, (?P<year>\d{4})\s+)?"
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<half>[ap]m)\b",
    re.IGNORECASE,
)
_UNIT_S = {"ms": 0.001, "m": 60.0, "h": 3600.0}
_MINUTE_S = 60.0
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
    """Seconds until the limit lifts, as the text says (None: it does not say). A clock time
    without a zone is read in ``now``'s (the local zone by default), as the CLI printed it."""
    moment = now or datetime.now().astimezone()
    seconds = _duration(text)
    if seconds is None:
        seconds = _until_reset(text, moment)
    if seconds is None:
        seconds = _until_clock(text, moment)
    return None if seconds is None else min(max(0.0, seconds), MAX_WAIT_S)


def _duration(text: str) -> float | None:
    """``retry-after-ms=3000``, ``Retry-After: 3``, ``try again in 1m12.864s``: in seconds."""
    header = _AFTER_MS.search(text)
    if header is not None:
        return float(header.group(1)) / 1000
    after = _AFTER.search(text)
    if after is None:
        return None
    return sum(_seconds(float(part[0]), part[1]) for part in _PART.findall(after.group(1)))


def _seconds(value: float, unit: str) -> float:
    unit = (unit or "s").lower()
    key = "ms" if unit.startswith("ms") or unit.startswith("milli") else unit[0]
    return value * _UNIT_S.get(key, 1.0)


def _until_reset(text: str, moment: datetime) -> float | None:
    resets = _RESETS.search(text)
    when = _moment(resets.group(1)) if resets is not None else None
    return None if when is None else (when - moment).total_seconds()


def _until_clock(text: str, moment: datetime) -> float | None:
    """``Try again at 5:17 PM`` (today) or ``at Dec 7th, 2026 5:17 PM``, to the end of that
    minute: the CLI dropped the seconds, and waiting past the reset beats hitting it again."""
    clock = _CLOCK.search(text)
    if clock is None:
        return None
    day = moment.date()
    if clock["date"]:
        try:
            day = datetime.strptime(f"{clock['date']} {clock['year']}", "%b %d %Y").date()
        except ValueError:
            return None
    hour, minute = int(clock["hour"]), int(clock["minute"])
    if not (1 <= hour <= 12 and minute < 60):
        return None
    hour = hour % 12 + (12 if clock["half"].lower() == "pm" else 0)
    when = datetime.combine(day, time(hour, minute), moment.tzinfo)
    return (when - moment).total_seconds() + _MINUTE_S


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
