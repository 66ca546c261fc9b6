"""How values look: badges, status words, durations, times (pure functions → Rich Text)."""

from __future__ import annotations

import re

from rich.text import Text

from uh_core.clock import now, parse_timestamp
from uh_core.shown import plural as plural  # the dashboard's name for it
from uh_core.workspace.state import MissionView

STATUS_STYLE = {
    "passed": "bold green",
    "succeeded": "bold green",
    "pass": "bold green",
    "agreement": "bold green",
    "agreeing": "green",
    "completed": "green",
    "failed": "bold red",
    "fail": "bold red",
    "error": "bold red",
    "divergent": "bold magenta",
    "unreadable": "bold red",
    "invalid": "bold red",
    "interrupted": "yellow",
    "blocked": "bold yellow",
    "budget_exhausted": "bold yellow",  # an attempt not started: it would pass a budget_usd
    "rate_limited": "bold yellow",  # the provider refused: not the agent's failure
    "parked": "yellow",  # waiting for a provider's limit to lift
    "needs review": "bold yellow",  # green, with lines that could tamper with the judge
    "cancelled": "yellow",
    "no_change": "bold yellow",  # ended well, changed nothing: never a success
    "skipped": "yellow",
    "unobserved": "yellow",
    "running": "bold cyan",
    "pending": "dim",
    "promoted": "bold green",
    "rejected": "bold red",
    "deferred": "yellow",
    "stale": "bold yellow",
    "unverified": "yellow",
    "-": "dim",
}
TONE_STYLE = {"good": "green", "bad": "red", "warn": "yellow", "live": "cyan", "": ""}
GROUP_STYLES = ("green", "magenta", "blue", "yellow", "cyan", "red")


def status(word: str | None) -> Text:
    word = word or "-"
    return Text(word, style=STATUS_STYLE.get(word, ""))


def badge(word: str | None) -> Text:
    """A verdict as a solid badge: `PASSED`, `FAILED`, `BLOCKED`, `PROMOTED`; `-` when never
    judged. Its colour is the word's colour in ``STATUS_STYLE`` (a verdict looks the same as a
    badge and as a status word); a word without one is grey."""
    word = word or "-"
    if word == "-":
        return Text(" - ", style="dim")
    return Text(f" {word.upper()} ", style=f"bold black on {badge_colour(word)}")


def badge_colour(word: str) -> str:
    """The colour of ``word``'s badge: its status colour without bold or dim, else grey50."""
    colours = [part for part in STATUS_STYLE.get(word, "").split() if part not in ("bold", "dim")]
    return colours[0] if colours else "grey50"


def live(text: str | None) -> Text:
    return Text(f"● {text}", style="bold cyan") if text else Text("")


def last_seen(stamp: str | None) -> str:
    """``last seen 2m ago``: when a state whose process is gone was last seen alive."""
    return f"last seen {ago(stamp)}" if stamp else "last seen: unknown"


def interrupted(stamp: str | None, what: str = "") -> Text:
    """``⚠ verify interrupted · last seen 2m ago``: something whose process died mid-run
    (``uh_core.workspace.liveness``); without ``what``, ``⚠ interrupted · last seen …``."""
    head = f"{what} interrupted" if what else "interrupted"
    return Text(f"⚠ {head} · {last_seen(stamp)}", style="yellow")


_SEEN = re.compile(r"last seen (\S+)\s*$")


def seen_in(text: str | None) -> str | None:
    """The time in an interrupted state's reason (``…; last seen 2026-01-15T11:59:50Z``, as
    ``uh_core.workspace.liveness.Lost.why`` writes it): a runtime's row has no field for it."""
    found = _SEEN.search(text or "")
    return found.group(1) if found else None


def interruptions(mission: MissionView) -> list[tuple[str, str | None]]:
    """What of ``mission`` was running when its process died, as (what, last seen):
    ``verify``, ``run NAME``, ``harness run``."""
    found: list[tuple[str, str | None]] = []
    if mission.verdict == "interrupted":
        found.append(("verify", mission.verdict_at))
    found += [
        (f"run {r.runtime}", seen_in(r.error))
        for r in mission.runtimes
        if r.status == "interrupted"
    ]
    if mission.harness is not None and mission.harness.status == "interrupted":
        found.append(("harness run", mission.harness.last_seen))
    return found


def interrupted_mission(mission: MissionView) -> Text | None:
    """A mission's row when something of it was interrupted (and nothing runs now):
    ``⚠ interrupted · last seen …`` at the latest time any of it was seen; else None."""
    if mission.live or not (mission.interrupted or interruptions(mission)):
        return None
    stamps = [stamp for _, stamp in interruptions(mission) if stamp]
    return interrupted(max(stamps) if stamps else None)


def duration(ms: int | None) -> str:
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms // 60_000}m{(ms % 60_000) // 1000:02d}s"


def clock(stamp: str) -> str:
    """``HH:MM:SS.mmm`` of an RFC 3339 timestamp (as written), or the text as it is."""
    if len(stamp) >= 23 and stamp[10] == "T":
        return stamp[11:23]
    return stamp[:12] or "-"


def ago(stamp: str | None) -> str:
    """How long ago, from uh_core's clock (frozen by UH_FROZEN_TIME in tests)."""
    if not stamp:
        return "-"
    try:
        seconds = int((now() - parse_timestamp(stamp)).total_seconds())
    except ValueError:
        return stamp
    if seconds < 0:
        return "just now"
    if seconds < 60:
        return f"{seconds}s ago"
    if seconds < 3600:
        return f"{seconds // 60}m ago"
    if seconds < 86400:
        return f"{seconds // 3600}h ago"
    return f"{seconds // 86400}d ago"


def short(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def outcome_glyph(outcome: str) -> Text:
    glyph, style = {
        "pass": ("●", "green"),
        "fail": ("●", "red"),
        "skipped": ("○", "yellow"),
        "blocked": ("■", "yellow"),  # handed over to a human
        "budget_exhausted": ("$", "yellow"),  # stopped by a budget_usd
        "rate_limited": ("⏸", "yellow"),  # a provider's limit outlasted the run
        "parked": ("⏸", "yellow"),  # waiting for a provider's limit to lift
        "interrupted": ("◌", "yellow"),  # the operator stopped it before its gate ruled
        "needs review": ("●", "yellow"),  # green, but a human reads the lines first
        "running": ("◐", "cyan"),
    }.get(outcome, ("·", "dim"))
    return Text(glyph, style=style)
