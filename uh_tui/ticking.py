"""Relative times move with the clock.

``created 1s ago`` or ``last seen 10s ago`` is true only when it is drawn; nothing is read
from disk when only the time passes, so the widgets and screens that show one re-render it
every ``EVERY`` seconds from what they were last given (a table re-sets its rows: only the
cells whose text changed are updated). Time is ``uh_core.clock.now``: a test freezes it
(``UH_FROZEN_TIME``), moves it, and sets ``EVERY`` small to see the text change.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.message_pump import MessagePump
from textual.timer import Timer

EVERY = 5.0  # seconds between re-renders of the relative times


def every_few_seconds(owner: MessagePump, callback: Callable[[], object]) -> Timer:
    """Call ``callback`` every ``EVERY`` seconds while ``owner`` runs."""
    return owner.set_interval(EVERY, callback, name="relative-times")
