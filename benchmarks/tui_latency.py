"""Append → on screen: how long an event takes from its log to the dashboard's screen.

    python benchmarks/tui_latency.py [--events 2000] [--rate 200] [--debounce MS] [--step MS]

A writer process appends ``runtime.progress`` events to one mission's log at ``--rate`` per
second (through uh_core's own writer: flock, one ``write`` per line), each carrying the
``CLOCK_MONOTONIC`` time it was appended. The app runs headless in this process; when a
frame is displayed (``App.post_display_hook``), every event line that became part of the
screen since the previous frame is timed. Prints ``p50 … ms  p95 … ms  p99 … ms``.
Target: p95 ≤ 50 ms.

``--debounce``/``--step`` override the watcher's tuning (uh_tui.watch.DEBOUNCE_MS/STEP_MS);
``--debounce 1600 --step 50`` is watchfiles' default, for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from uh_core.init import init_project  # noqa: E402
from uh_core.layout import Layout  # noqa: E402
from uh_core.workspace.state import Update  # noqa: E402
from uh_tui import watch  # noqa: E402
from uh_tui.app import UhApp  # noqa: E402

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from uh_core.events.writer import EventLog
    from uh_core.models.events import RuntimeProgress
    path, count, rate = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    log = EventLog(path, mission_id="bench", run_id="sbx-bench-writer")
    start = time.monotonic() + 0.2
    for n in range(count):
        due = start + n / rate
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        log.emit(RuntimeProgress(runtime="writer", message=f"seq={n} t={time.monotonic_ns()}"))
    """
)


class TimedApp(UhApp):
    """Notes each new bench line when the UI applies it; times it when a frame is shown."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.pending: list[int] = []  # append times (ns) of lines applied, not yet displayed
        self.latencies_ms: list[float] = []
        self.seen: set[int] = set()

    def apply(self, update: Update) -> None:
        super().apply(update)
        for line in update.events:
            if line.source == "bench" and line.text.startswith("runtime=writer"):
                seq, appended = _parse(line.text)
                if seq not in self.seen:
                    self.seen.add(seq)
                    self.pending.append(appended)

    def post_display_hook(self) -> None:
        if self.pending:
            now = time.monotonic_ns()
            self.latencies_ms.extend((now - t) / 1e6 for t in self.pending)
            self.pending = []


def _parse(text: str) -> tuple[int, int]:
    found = re.search(r"seq=(\d+) t=(\d+)", text)
    assert found is not None, text
    return int(found.group(1)), int(found.group(2))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--debounce", type=int, default=watch.DEBOUNCE_MS)
    parser.add_argument("--step", type=int, default=watch.STEP_MS)
    args = parser.parse_args()
    watch.DEBOUNCE_MS, watch.STEP_MS = args.debounce, args.step

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        layout = Layout(root)
        init_project(layout)
        layout.mission_file("bench").parent.mkdir(parents=True)
        layout.mission_file("bench").write_text("id: bench\ntitle: latency bench\n")
        app = TimedApp(root)

        async def drive(pilot) -> None:  # type: ignore[no-untyped-def]
            while not app.data_ready.is_set():
                await asyncio.sleep(0.01)
            await pilot.pause(0.5)  # the watchers are up
            writer = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    WRITER,
                    str(layout.mission_events("bench")),
                    str(args.events),
                    str(args.rate),
                ],
                cwd=ROOT,
            )
            while writer.poll() is None:
                await asyncio.sleep(0.05)
            deadline = time.monotonic() + 5
            while len(app.seen) < args.events and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await pilot.pause(0.2)
            app.exit()

        started = time.monotonic()
        app.run(headless=True, size=(120, 36), auto_pilot=drive)
        elapsed = time.monotonic() - started

    got = app.latencies_ms
    print(
        f"watchfiles debounce={args.debounce} ms step={args.step} ms · "
        f"{args.events} events at {args.rate:g}/s · {len(got)} timed on screen · {elapsed:.1f} s"
    )
    if not got:
        print("no event reached the screen")
        sys.exit(1)
    print(
        f"p50 {percentile(got, 50):.1f} ms  p95 {percentile(got, 95):.1f} ms  "
        f"p99 {percentile(got, 99):.1f} ms  "
        f"(max {max(got):.1f} ms, mean {statistics.mean(got):.1f} ms)"
    )


if __name__ == "__main__":
    main()
