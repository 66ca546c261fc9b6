"""An interrupt held off while a command just started is handed to the object that stops it.

Ctrl-C (and SIGTERM or SIGHUP, which the CLI turns into one) raises ``KeyboardInterrupt``
at whatever bytecode the main thread is running. Between a command's spawn and the
``LoggedProcess`` that will stop it there are a few dozen of them: the return of the C call
before its pid is stored, the closing of the spawn's descriptors, the return through the
launcher. An interrupt raised there leaves the command running with nobody to stop it (a
loaded machine schedules the child first, so a check can have started, and a signal be
sent because it started, before the parent has its pid). ``held()`` covers that stretch:
an interrupt that arrives inside it is remembered and raised as it ends, when the command
has an owner; a second one is raised at once.

Only the CLI's own handlers defer (``raise_interrupt``); a handler that merely cancels a
token never raises, so it needs no holding.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_MAIN = threading.main_thread()
_depth = 0  # nested held() blocks in the main thread (handlers run there only)
_pending: int | None = None  # the signal that arrived while held


def raise_interrupt(signum: int = signal.SIGINT, _frame: Any = None) -> None:
    """A signal handler: ``KeyboardInterrupt`` now, or as the held stretch ends. A second
    one while the first is held raises at once: a stretch that blocks (a judge session's
    starter that stopped answering) never makes uh deaf to the operator."""
    global _pending
    if _depth and _pending is None:
        _pending = signum
        return
    _pending = None
    raise KeyboardInterrupt


@contextmanager
def held() -> Iterator[None]:
    """Interrupts wait until the block ends (main thread; a no-op in any other, where no
    handler runs). Keep the block short: it delays a Ctrl-C by its length."""
    global _depth, _pending
    if threading.current_thread() is not _MAIN:
        yield
        return
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _pending is not None:
            _pending = None
            raise KeyboardInterrupt
