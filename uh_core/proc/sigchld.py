"""SIGCHLD back to its default before anything runs: the CLI and the dashboard (which
launches ``uh-core`` runs) both call it, so it lives below both."""

from __future__ import annotations

import signal


def reap_our_children() -> None:
    """Started with SIGCHLD ignored (a parent can pass that on), the kernel would reap our
    commands itself and their exit statuses would be lost: Popen then reports 0, so a
    failing check would pass. Put the default back before running anything."""
    if signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
