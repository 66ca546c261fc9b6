"""Run by ``test_reaper.py`` in a process of its own: becoming a subreaper is for life, and
pytest's own process must not become one. Prints one JSON object of what it saw.

usage: reaper_helper.py SCENARIO MARKER...
       reaper_helper.py respawn MODE MARKER OUT [WORKTREE]   (tests/security/respawner.py)
       reaper_helper.py polite MARKER OUT
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.isolation.procs import FAMILY_VAR, family, kill_family, kill_marked, marked
from uh_core.harness.reap import reap_in
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


RESPAWNER = Path(__file__).resolve().parents[1] / "security" / "respawner.py"


def _wait_for(pids: Callable[[], list[int]]) -> bool:
    """Whether ``pids`` named a process within 10 s (one look that found some is enough:
    a racing family may be between two generations at the next look)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if pids():
            return True
        time.sleep(0.01)
    return False


def _respawn(mode: str, marker: str, out: Path, worktree: Path | None) -> dict[str, object]:
    """Start the hostile daemon as our descendant (in ``worktree``, as a mission's agent
    would, when given), reap, and watch past the moment it would act."""
    started = time.monotonic()
    env = {**os.environ, FAMILY_VAR: marker}
    bystander = excluded = None
    if worktree is not None:
        env["UH_SANDBOX"] = str(worktree)
        # Another mission's processes: one excluded (its agent), one not (its orphan).
        excluded = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, cwd="/")
        bystander = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, cwd="/")
    argv = [sys.executable, str(RESPAWNER), mode, marker, str(out)]
    subprocess.run(argv, env=env, cwd=worktree, check=True, stdin=subprocess.DEVNULL)
    started_file = Path(f"{out}.started")
    seen: dict[str, object] = {
        "alive before": _wait_for(lambda: [1] if started_file.exists() else [])
    }
    if worktree is None:
        survivors = reap_survivors(grace_s=0.3)
    else:
        assert excluded is not None
        survivors = reap_in(worktree, exclude={excluded.pid})
    seen["survivors"] = [[s.pid, s.cmdline, s.stuck] for s in survivors]
    seen["unlisted"] = survivors.unlisted
    seen["alive after"] = family(marker)
    time.sleep(max(0.0, started + 3.0 - time.monotonic()))  # it would act after 2 s
    seen["alive later"] = family(marker)
    seen["written"] = out.exists()
    if excluded is not None and bystander is not None:
        seen["others running"] = [excluded.poll() is None, bystander.poll() is None]
        for other in (excluded, bystander):
            other.kill()
            other.wait()
    seen["children after"] = children_of(os.getpid())
    return seen


def _polite(marker: str, out: Path) -> dict[str, object]:
    """An honest daemon that cleans up on SIGTERM: it gets SIGTERM before anything else."""
    script = f"""
        (setsid sh -c 'trap "echo term > {out}; exit 0" TERM; sleep {marker} & wait' </dev/null >/dev/null 2>&1 &)
        exit 0
    """
    subprocess.run(["sh", "-c", script], check=True, stdin=subprocess.DEVNULL)
    seen: dict[str, object] = {"alive before": _wait_for(lambda: marked(marker))}
    survivors = reap_survivors(grace_s=5.0)
    seen["survivors"] = [s.cmdline for s in survivors]
    seen["cleaned up"] = out.read_text().strip() if out.exists() else None
    seen["alive after"] = marked(marker)
    seen["children after"] = children_of(os.getpid())
    return seen


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
    if scenario == "respawn":
        mode, marker, out, *worktree = markers
        return seen | _respawn(mode, marker, Path(out), Path(worktree[0]) if worktree else None)
    if scenario == "polite":
        return seen | _polite(markers[0], Path(markers[1]))
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
        if sys.argv[1] == "respawn":
            kill_family([sys.argv[3]])
