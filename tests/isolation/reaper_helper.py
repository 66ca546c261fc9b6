"""Run by ``test_reaper.py`` in a process of its own: becoming a subreaper is for life, and
pytest's own process must not become one. Prints one JSON object of what it saw.

usage: reaper_helper.py SCENARIO MARKER...
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.isolation.procs import kill_marked, marked
from uh_core.isolation import (
    become_subreaper,
    children_of,
    is_subreaper,
    reap_survivors,
    wrap_argv,
)


def _orphans(daemon: str, nested: str, stubborn: str) -> None:
    """Leave three daemons behind, each started by a shell that exits at once: a setsid
    double fork whose own child is in another session, and one that ignores SIGTERM."""
    script = f"""
        (setsid sh -c 'setsid sleep {nested} </dev/null >/dev/null 2>&1 & exec sleep {daemon}' </dev/null >/dev/null 2>&1 &)
        (trap '' TERM; setsid sleep {stubborn} </dev/null >/dev/null 2>&1 &)
        exit 0
    """
    subprocess.run(["sh", "-c", script], check=True, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(marked(m) for m in (daemon, nested, stubborn)):
        time.sleep(0.02)


def _under_bwrap(markers: list[str], work: Path) -> dict[str, object]:
    """Sandboxed runs leaving daemons, each reaped at once: bwrap's PID 1 is reparented to
    us while its namespace is torn down, and must not be reported as a survivor."""
    reported: list[str] = []
    for marker in markers:
        script = f"setsid sleep {marker} </dev/null >/dev/null 2>&1 & sleep 0.05; exit 0"
        argv = wrap_argv(["sh", "-c", script], writable=[work], readable=[], cwd=work)
        subprocess.run(argv, check=True, stdin=subprocess.DEVNULL)
        reported += [s.cmdline for s in reap_survivors()]
    return {
        "survivors": reported,
        "alive after": {m: marked(m) for m in markers},
        "children after": children_of(os.getpid()),
    }


def main(scenario: str, markers: list[str]) -> dict[str, object]:
    me = os.getpid()
    seen: dict[str, object] = {"subreaper before": is_subreaper()}
    seen["become"] = become_subreaper()
    seen["become again"] = become_subreaper()
    seen["subreaper after"] = is_subreaper()
    if scenario == "nothing":
        started = time.monotonic()
        seen["survivors"] = [s.cmdline for s in reap_survivors()]
        seen["seconds"] = time.monotonic() - started
        return seen
    if scenario == "bwrap":
        return seen | _under_bwrap(markers, Path(os.environ["UH_ISO_WORK"]))
    daemon, nested, stubborn = markers[:3]
    keep = None
    if scenario == "exclude":
        keep = subprocess.Popen(["sleep", markers[3]], stdin=subprocess.DEVNULL)
    _orphans(daemon, nested, stubborn)
    seen["alive before"] = {m: marked(m) for m in markers}
    children = children_of(me)
    seen["daemon is our child"] = any(pid in children for pid in marked(daemon))
    seen["stubborn is our child"] = any(pid in children for pid in marked(stubborn))
    started = time.monotonic()
    survivors = reap_survivors(exclude={keep.pid} if keep else set(), grace_s=0.3)
    seen["seconds"] = time.monotonic() - started
    seen["survivors"] = [[s.pid, s.cmdline] for s in survivors]
    seen["alive after"] = {m: marked(m) for m in markers}
    seen["children after"] = children_of(me)
    if keep:
        seen["kept pid"] = keep.pid
        seen["kept running"] = keep.poll() is None
        keep.kill()
        keep.wait()
    return seen


if __name__ == "__main__":
    try:
        print(json.dumps(main(sys.argv[1], sys.argv[2:])))
    finally:
        kill_marked(sys.argv[2:])
