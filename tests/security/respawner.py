"""A hostile survivor, started (unconfined) by ``tests/isolation/reaper_helper.py`` for
``test_respawning_survivor.py``. It ignores SIGTERM, SIGINT and SIGHUP, and acts after the
run: ``DELAY_S`` after it started, whichever of its processes is alive writes OUT.

usage: respawner.py MODE MARKER OUT

- ``race``: re-forks into a new session in a tight loop, each generation exiting as soon
  as its child exists — the pid changes faster than a reaper's rounds go by;
- ``daemon``: double-forks into a daemon in a session of its own and sleeps;
- ``hydra``: a tree of ``HYDRA_DEPTH`` levels of such daemons, each in its own session.

The starting process exits at once, as a daemonising program does; its child writes
``OUT.started`` before it begins.
"""

from __future__ import annotations

import os
import signal
import sys
import time

DELAY_S = 2.0
HYDRA_DEPTH = 5  # 2**5 - 1 = 31 processes


def _act(out: str, started: float) -> None:
    if time.monotonic() - started >= DELAY_S:
        with open(out, "a", encoding="utf-8") as handle:
            handle.write(f"acted after the run: pid {os.getpid()}\n")
        os._exit(0)


def _race(out: str, started: float) -> None:
    while True:
        _act(out, started)
        try:
            child = os.fork()
        except OSError:
            continue
        if child:
            os._exit(0)
        os.setsid()


def _daemon(out: str, started: float) -> None:
    if os.fork():
        os._exit(0)
    os.setsid()
    if os.fork():
        os._exit(0)
    while True:
        time.sleep(0.05)
        _act(out, started)


def _hydra(out: str, started: float, depth: int) -> None:
    for _ in range(2 if depth > 1 else 0):
        if os.fork() == 0:
            os.setsid()
            _hydra(out, started, depth - 1)
    while True:
        time.sleep(0.05)
        _act(out, started)


def main(mode: str, out: str) -> None:
    started = time.monotonic()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    if os.fork():
        os._exit(0)  # the caller sees a program that ended; its child carries on
    os.setsid()
    with open(out + ".started", "w", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()}\n")
    if mode == "race":
        _race(out, started)
    elif mode == "daemon":
        _daemon(out, started)
    elif mode == "hydra":
        _hydra(out, started, HYDRA_DEPTH)
    os._exit(2)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[3])
