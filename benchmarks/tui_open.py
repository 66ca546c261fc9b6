"""Opening a huge event log: time to the first frame showing the newest events, and RSS.

    python benchmarks/tui_open.py [--events 1000000] [--toolong PYTHON]

Builds (once, under benchmarks/.work/) a workspace whose mission ``big`` has a log of
``--events`` events (~250 bytes each: 1,000,000 ≈ 250 MB), then, each in a fresh process:

- ``uh``: the dashboard, headless, on that workspace;
- ``toolong`` (``tl``, the Textual log viewer) on the same file, from its own virtual
  environment (its Textual pin differs from ours): ``--toolong /tmp/toolong-venv/bin/python``
  (default: that path when it exists; made with ``python -m venv /tmp/toolong-venv &&
  /tmp/toolong-venv/bin/pip install toolong``).

Each process reports, from its own start (interpreter start included): when a displayed
frame first holds the newest event, its peak RSS then, and for uh also when the whole
history has been folded (the criteria table is then exact) and the peak RSS after that.
Targets (issue 23): first frame ≤ 0.65 s, ≤ 100 MB; whole history folded ≤ 3 s,
≤ 150 MB (baseline: ``wc -l`` on the file, in the same run). ``--runs N`` (default 3)
repeats every figure in fresh processes, interleaved, and prints median (min–max).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / "benchmarks" / ".work" / "tui_open"
TOOLONG = Path("/tmp/toolong-venv/bin/python")
MARKER = "newest-event-marker"

UH_PROBE = textwrap.dedent(
    """
    import json, resource, sys, time
    t0 = float(sys.argv[2])
    from pathlib import Path
    from uh_tui.app import UhApp
    MARKER, report = sys.argv[3], {"imports_s": time.monotonic() - t0}

    def rss_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    class Probe(UhApp):
        def post_display_hook(self):
            if "first_frame_s" not in report:
                board = self.dashboard()
                if board is not None and board.ready:
                    lines = board.query_one("#events").lines
                    if any(MARKER in line for line in lines[-3:]):
                        report["first_frame_s"] = time.monotonic() - t0
                        report["rss_first_mb"] = rss_mb()
                        report["frame"] = self.export_text()
            elif time.monotonic() - t0 > 300:
                report["gave_up_s"] = time.monotonic() - t0
                self.exit()
            elif "folded_s" not in report:
                big = self.snapshot.mission("big")
                if big is not None and big.catching_up is None:
                    report["folded_s"] = time.monotonic() - t0
                    report["rss_peak_mb"] = rss_mb()
                    report["events_folded"] = big.events
                    self.exit()

    app = Probe(Path(sys.argv[1]))
    app.run(headless=True, size=(120, 36))
    report["on_screen"] = MARKER in report.pop("frame", "")
    print(json.dumps(report))
    """
)

TOOLONG_PROBE = textwrap.dedent(
    """
    import io, json, resource, sys, time
    t0 = float(sys.argv[2])
    from rich.console import Console
    from toolong.ui import UI
    MARKER, report = sys.argv[3], {}

    def rss_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    class Probe(UI):
        # A timer, not post_display_hook: once toolong's first frame is up, nothing may
        # repaint until its scan is done, and the probe must still look (and give up).
        def on_ready(self):
            self.set_interval(0.05, self.look)

        def look(self):
            now = time.monotonic()
            console = Console(width=120, height=36, file=io.StringIO(), record=True,
                              color_system=None, legacy_windows=False)
            console.print(self.screen._compositor.render_update(full=True))
            if MARKER in console.export_text():
                report["first_frame_s"] = now - t0
                report["rss_first_mb"] = rss_mb()
                report["on_screen"] = True
                self.exit()
            elif now - t0 > float(sys.argv[4]):
                report["gave_up_s"] = now - t0
                report["rss_first_mb"] = rss_mb()
                self.exit()

    Probe([sys.argv[1]]).run(headless=True, size=(120, 36))
    print(json.dumps(report))
    """
)


def build(events: int) -> Path:
    """The workspace (cached by event count): one mission whose log has ``events`` lines."""
    root = WORK / f"ws-{events}-v2"
    log = root / ".harness/missions/big/events.ndjson"
    done = root / ".built"
    if done.exists():
        return root
    sys.path.insert(0, str(ROOT))
    from uh_core.init import init_project
    from uh_core.layout import Layout

    if root.exists():
        import shutil

        shutil.rmtree(root)
    root.mkdir(parents=True)
    init_project(Layout(root))
    log.parent.mkdir(parents=True)
    (log.parent / "mission.yaml").write_text(
        "id: big\ntitle: A mission with a million events\nacceptance_criteria:\n"
        "  - id: smoke\n    check_command: 'true'\n"
    )
    started = time.monotonic()
    head = (
        '{"event":"%s","timestamp":"2026-01-15T%02d:%02d:%02d.%03dZ",'
        '"mission_id":"big","run_id":"r%d"'
    )
    filler = "x" * 120
    with open(log, "w", encoding="utf-8") as out:
        chunk = []
        for n in range(events):
            run = n // 100_000
            seconds = n // 100
            stamp = (seconds // 3600 % 24, seconds // 60 % 60, seconds % 60, n % 1000)
            if n % 100_000 == 0:
                line = (head % ("verification.started", *stamp, run)) + ',"total_acceptance":1}'
            elif n % 100_000 == 99_999 or n == events - 1:
                line = (head % ("acceptance.checked", *stamp, run)) + (
                    ',"ac_id":"smoke","status":"passed","exit_code":0,"duration_ms":5}'
                )
            else:
                line = (head % ("runtime.progress", *stamp, run)) + (
                    f',"runtime":"alpha","kind":"log","message":"step {n} {filler}"}}'
                )
            chunk.append(line)
            if len(chunk) == 10_000:
                out.write("\n".join(chunk) + "\n")
                chunk = []
        # the marker leads the line too: toolong shows raw lines from their first column
        last = (head % ("runtime.progress", 23, 59, 59, 999, events)).replace(
            "{", f'{{"note":"{MARKER}",', 1
        ) + f',"runtime":"alpha","kind":"log","message":"{MARKER} {events}"}}'

        chunk.append(last)
        out.write("\n".join(chunk) + "\n")
    done.write_text("ok\n")
    size = log.stat().st_size
    print(
        f"built {log} ({events + 1} events, {size / 1e6:.0f} MB) "
        f"in {time.monotonic() - started:.1f} s"
    )
    return root


def probe(argv: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    started = time.monotonic()
    result = subprocess.run(
        [*argv[:4], f"{started}", *argv[4:]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=600,
    )
    if result.returncode != 0 or not result.stdout.strip():
        return {"error": (result.stderr or result.stdout).strip().splitlines()[-1:]}
    return json.loads(result.stdout.strip().splitlines()[-1])


def spread(values: list[float], unit: str, digits: int = 2) -> str:
    """median (min–max over the runs)"""
    good = sorted(v for v in values if v == v)
    if not good:
        return "n/a"
    mid = good[len(good) // 2]
    return f"{mid:.{digits}f} {unit} ({good[0]:.{digits}f}–{good[-1]:.{digits}f})"


def wc_seconds(log: Path) -> float:
    started = time.monotonic()
    subprocess.run(["wc", "-l", str(log)], check=True, capture_output=True)
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per figure")
    parser.add_argument("--toolong", type=Path, default=TOOLONG if TOOLONG.exists() else None)
    parser.add_argument("--toolong-timeout", type=float, default=120.0)
    args = parser.parse_args()
    root = build(args.events)
    log = root / ".harness/missions/big/events.ndjson"
    size_mb = log.stat().st_size / 1e6
    # Bytecode as an installed package has it: with PYTHONDONTWRITEBYTECODE set (as on this
    # machine) and no cache, every start would compile uh's sources again (~0.3 s).
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "uh_core", "uh_tui"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    os.sync()
    print(
        f"log: {args.events + 1} events, {size_mb:.0f} MB; {args.runs} runs each, "
        "figures as median (min–max)"
    )
    uhs: list[dict[str, object]] = []
    tls: list[dict[str, object]] = []
    wcs: list[float] = []
    for _ in range(args.runs):  # interleaved, so load from others falls on every side alike
        wcs.append(wc_seconds(log))
        uh = probe([sys.executable, "-c", UH_PROBE, str(root), MARKER])
        uhs.append(uh)
        if "error" in uh:
            print(f"uh       error: {uh['error']}")
        elif not uh.get("on_screen"):
            print("uh       [newest event NOT on screen]")
        if args.toolong is not None and args.toolong.exists():
            tls.append(
                probe(
                    [
                        str(args.toolong),
                        "-c",
                        TOOLONG_PROBE,
                        str(log),
                        MARKER,
                        str(args.toolong_timeout),
                    ]
                )
            )

    def figures(reports: list[dict[str, object]], key: str) -> list[float]:
        return [float(r.get(key, float("nan"))) for r in reports]  # type: ignore[arg-type]

    print(
        "uh       first frame with the newest event: "
        f"{spread(figures(uhs, 'first_frame_s'), 's')} "
        f"(interpreter and imports {spread(figures(uhs, 'imports_s'), 's')}), "
        f"RSS {spread(figures(uhs, 'rss_first_mb'), 'MB', 0)}"
    )
    if tls:
        print(
            "toolong  first frame with the newest event: "
            f"{spread(figures(tls, 'first_frame_s'), 's')}, "
            f"RSS {spread(figures(tls, 'rss_first_mb'), 'MB', 0)}"
        )
    else:
        print("toolong  skipped (no --toolong PYTHON; see the module docstring)")
    print(
        f"uh       whole history folded ({uhs[-1].get('events_folded', '?')} events): "
        f"{spread(figures(uhs, 'folded_s'), 's')}, "
        f"peak RSS {spread(figures(uhs, 'rss_peak_mb'), 'MB', 0)}"
    )
    print(f"wc -l    on the same file: {spread(wcs, 's')}")


if __name__ == "__main__":
    main()
