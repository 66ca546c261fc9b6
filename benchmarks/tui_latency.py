"""Append → on screen: how long an event takes from its log to the dashboard's screen.

    python benchmarks/tui_latency.py [--events 2000] [--rate 200] [--neighbour [N]]
                                     [--same-session] [--debounce MS] [--step MS]
                                     [--no-baseline]

A writer process appends ``runtime.progress`` events to one mission's log at ``--rate`` per
second (through uh_core's own writer: flock, one ``write`` per line), each carrying the
``CLOCK_MONOTONIC`` time it was appended. The app runs headless in this process; when a
frame is displayed (``App.post_display_hook``), every event line that became part of the
screen since the previous frame is timed. Target: p95 ≤ 25 ms, also with ``--neighbour``.

In the same run, first the **baseline**: watchfiles alone, with the same tuning, on the
same folder, in a thread of this process, reading the appended lines as soon as it yields
(no store, no UI) — what any watcher-driven tail pays. Then the dashboard. Each event is
also timed per stage (printed below the figures):

    wake    append → the reader thread starts the read that returns it
    read    → the store has read, folded and published it
    hop     → the UI thread takes the update (the message into Textual's loop)
    apply   → the screen and its widgets have the new values
    wait    → a frame starts drawing it (Textual draws at most ``MAX_FPS`` times a second)
    frame   → that frame is displayed (compositor)

``--neighbour [N]`` runs N CPU-bound processes (``while True: pass``; N defaults to the
number of cores) during each measurement, baseline included, and kills them after. Each
runs in a session of its own, as the agents uh-core starts do and as anything started
from another terminal does: with the kernel's autogroup scheduling (Linux's default,
``/proc/sys/kernel/sched_autogroup_enabled``) a session shares the CPU with other
sessions as one. ``--same-session`` keeps them in this process's session instead: they
then take their share out of the dashboard's own (a busy loop started from the same
shell before ``uh``), the harshest case.
``--debounce``/``--step`` override the watcher's tuning (uh_tui.watch.DEBOUNCE_MS/STEP_MS);
``--debounce 1600 --step 50`` is watchfiles' default, for comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import watchfiles  # noqa: E402
from textual.screen import Screen  # noqa: E402

from uh_core.init import init_project  # noqa: E402
from uh_core.layout import Layout  # noqa: E402
from uh_core.workspace.state import Update  # noqa: E402
from uh_core.workspace.store import Store  # noqa: E402
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
NEIGHBOUR = "while True: pass"
SEQ = re.compile(r"seq=(\d+) t=(\d+)")
STAGES = ("wake", "read", "hop", "apply", "wait", "frame")


def _parse(text: str) -> tuple[int, int] | None:
    found = SEQ.search(text)
    return (int(found.group(1)), int(found.group(2))) if found else None


def _now() -> int:
    return time.monotonic_ns()


class Trace:
    """Per event (by its sequence number): when it reached each stage (monotonic ns)."""

    def __init__(self) -> None:
        self.appended: dict[int, int] = {}
        self.stamps: dict[int, dict[str, int]] = {}
        self.lock = threading.Lock()

    def read(self, update: Update | None, started: int) -> None:
        """A store read ``started`` at that time returned ``update``."""
        if update is None:
            return
        done = _now()
        for line in update.events:
            parsed = _parse(line.text) if line.source == "bench" else None
            if parsed is not None and parsed[0] not in self.stamps:
                self.appended[parsed[0]] = parsed[1]
                self.stamps[parsed[0]] = {"wake": max(started, parsed[1]), "read": done}

    def mark(self, seqs: list[int], stage: str, at: int | None = None) -> None:
        at = _now() if at is None else at
        for seq in seqs:
            stamps = self.stamps.get(seq)
            if stamps is not None and stage not in stamps:
                # a line read while the UI was taking the mailbox rides with that take
                stamps[stage] = max([at, *stamps.values()])

    def breakdown(self) -> dict[str, list[float]]:
        """Each stage's share of each fully traced event (ms)."""
        out: dict[str, list[float]] = {stage: [] for stage in ("total", *STAGES)}
        for seq, stamps in self.stamps.items():
            if not all(stage in stamps for stage in STAGES):
                continue
            previous = self.appended[seq]
            out["total"].append((stamps["frame"] - previous) / 1e6)
            for stage in STAGES:
                out[stage].append((stamps[stage] - previous) / 1e6)
                previous = stamps[stage]
        return out


class TimedApp(UhApp):
    """Notes each new bench line when the UI applies it; times it when a frame is shown."""

    def __init__(self, root: Path, trace: Trace) -> None:
        super().__init__(root)
        self.trace = trace
        self.pending: list[int] = []  # seqs applied, not yet displayed
        self.latencies_ms: list[float] = []
        self.seen: set[int] = set()
        self.taken = 0
        self.frame_started = 0

    def on_data_arrived(self, message: Any) -> None:
        self.taken = _now()
        super().on_data_arrived(message)

    def apply(self, update: Update) -> None:
        super().apply(update)
        applied = _now()
        seqs = []
        for line in update.events:
            parsed = _parse(line.text) if line.source == "bench" else None
            if parsed is not None and parsed[0] not in self.seen:
                self.seen.add(parsed[0])
                self.trace.appended.setdefault(parsed[0], parsed[1])
                seqs.append(parsed[0])
        self.trace.mark(seqs, "hop", self.taken or applied)
        self.trace.mark(seqs, "apply", applied)
        self.pending.extend(seqs)

    def post_display_hook(self) -> None:
        if self.pending:
            now = _now()
            self.latencies_ms.extend((now - self.trace.appended[s]) / 1e6 for s in self.pending)
            self.trace.mark(self.pending, "wait", self.frame_started or now)
            self.trace.mark(self.pending, "frame", now)
            self.pending = []


@contextmanager
def instrumented(trace: Trace, app: TimedApp) -> Iterator[None]:
    """Stamp the stages: the reader's wake, each store read, each frame's start."""
    originals: list[tuple[object, str, object]] = []

    def patch(owner: object, name: str, make: Callable[[Any], Any]) -> None:
        original = getattr(owner, name)
        originals.append((owner, name, original))
        setattr(owner, name, make(original))

    def timed_read(original: Any) -> Any:
        def read(self: Store, *args: Any) -> Update | None:
            started = _now()
            update: Update | None = original(self, *args)
            trace.read(update, started)
            return update

        return read

    for name in ("full", "changed", "more"):
        patch(Store, name, timed_read)

    def frame(original: Any) -> Any:
        def update(self: Screen[Any]) -> None:
            app.frame_started = _now()
            original(self)

        return update

    patch(Screen, "_on_timer_update", frame)
    try:
        yield
    finally:
        for owner, name, original in reversed(originals):
            setattr(owner, name, original)


@contextmanager
def neighbours(count: int, same_session: bool = False) -> Iterator[None]:
    """``count`` CPU-bound processes for the duration, each in a session of its own unless
    ``same_session``."""
    procs = [
        subprocess.Popen([sys.executable, "-c", NEIGHBOUR], start_new_session=not same_session)
        for _ in range(count)
    ]
    try:
        time.sleep(0.3 if procs else 0)  # let them reach their loop
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def start_writer(log: Path, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(log), str(args.events), str(args.rate)], cwd=ROOT
    )


def workspace(tmp: str) -> Layout:
    layout = Layout(Path(tmp))
    init_project(layout)
    layout.mission_file("bench").parent.mkdir(parents=True)
    layout.mission_file("bench").write_text("id: bench\ntitle: latency bench\n")
    return layout


def measure_baseline(args: argparse.Namespace) -> tuple[list[float], float]:
    """watchfiles alone (same tuning) on the missions folder; on each batch, read the new
    bytes of the log and time each complete line."""
    latencies: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        layout = workspace(tmp)
        log = layout.mission_events("bench")
        stop = threading.Event()
        ready = threading.Event()

        def follow() -> None:
            offset = 0
            ready.set()
            for _changes in watchfiles.watch(
                layout.harness / "missions",
                watch_filter=None,
                debounce=args.debounce,
                step=args.step,
                stop_event=stop,
                raise_interrupt=False,
            ):
                woke = _now()
                try:
                    with log.open("rb") as handle:
                        handle.seek(offset)
                        data = handle.read()
                except FileNotFoundError:
                    continue
                end = data.rfind(b"\n") + 1
                offset += end
                for raw in data[:end].splitlines():
                    parsed = _parse(raw.decode())
                    if parsed is not None:
                        latencies.append((woke - parsed[1]) / 1e6)

        thread = threading.Thread(target=follow, daemon=True)
        with neighbours(args.neighbour, args.same_session):
            thread.start()
            ready.wait()
            time.sleep(0.5)  # the watcher is up
            writer = start_writer(log, args)
            cpu, wall = _cpu(), time.monotonic()
            writer.wait()
            cpu, wall = _cpu() - cpu, time.monotonic() - wall
            deadline = time.monotonic() + 5
            while len(latencies) < args.events and time.monotonic() < deadline:
                time.sleep(0.05)
            stop.set()
            thread.join(5)
    return latencies, cpu / wall


def measure_dashboard(
    args: argparse.Namespace,
) -> tuple[list[float], Trace, float, dict[str, float]]:
    trace = Trace()
    cpu = [0.0, 1.0]  # this process's CPU seconds while the writer wrote, and that time
    threads: dict[str, float] = {}  # each thread's share of a core over that time
    with tempfile.TemporaryDirectory() as tmp:
        layout = workspace(tmp)
        app = TimedApp(layout.root, trace)

        async def drive(pilot: Any) -> None:
            while not app.data_ready.is_set():
                await asyncio.sleep(0.01)
            await pilot.pause(0.5)  # the watchers are up
            writer = start_writer(layout.mission_events("bench"), args)
            cpu[0], cpu[1] = _cpu(), time.monotonic()
            threads.update(_thread_cpu())
            while writer.poll() is None:
                await asyncio.sleep(0.05)
            cpu[0], cpu[1] = _cpu() - cpu[0], time.monotonic() - cpu[1]
            for name, used in _thread_cpu().items():
                threads[name] = (used - threads.get(name, 0.0)) / cpu[1]
            deadline = time.monotonic() + 5
            while len(app.seen) < args.events and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await pilot.pause(0.2)
            app.exit()

        with neighbours(args.neighbour, args.same_session), instrumented(trace, app):
            app.run(headless=True, size=(120, 36), auto_pilot=drive)
    return app.latencies_ms, trace, cpu[0] / cpu[1], threads


def _thread_cpu() -> dict[str, float]:
    """CPU seconds of each of this process's threads so far, by Python thread name."""
    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        try:
            fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(tid), "other")
        name = "main" if name == "MainThread" else name
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def figures(values: list[float]) -> str:
    if not values:
        return "nothing reached the screen"
    return (
        f"p50 {percentile(values, 50):5.1f}  p95 {percentile(values, 95):5.1f}  "
        f"p99 {percentile(values, 99):6.1f}  max {max(values):6.1f}  "
        f"mean {statistics.mean(values):5.1f} ms"
    )


def print_breakdown(trace: Trace) -> None:
    parts = trace.breakdown()
    totals = parts["total"]
    if not totals:
        return
    cut = percentile(totals, 95)
    slow = [i for i, total in enumerate(totals) if total >= cut]
    print(f"stages (ms; {len(totals)} events traced; 'at p95': mean over events ≥ p95 total)")
    print(f"  {'stage':<7} {'p50':>6} {'p95':>6} {'at p95':>7}")
    for stage in ("total", *STAGES):
        values = parts[stage]
        at_p95 = statistics.mean(values[i] for i in slow)
        print(
            f"  {stage:<7} {percentile(values, 50):6.1f} {percentile(values, 95):6.1f} "
            f"{at_p95:7.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--debounce", type=int, default=watch.DEBOUNCE_MS)
    parser.add_argument("--step", type=int, default=watch.STEP_MS)
    parser.add_argument(
        "--neighbour",
        type=int,
        nargs="?",
        const=os.cpu_count() or 1,
        default=0,
        metavar="N",
        help="run N CPU-bound processes while measuring (default: one per core)",
    )
    parser.add_argument(
        "--same-session",
        action="store_true",
        help="start the neighbours in this process's session (they share its CPU slice)",
    )
    parser.add_argument("--no-baseline", action="store_true", help="measure the dashboard only")
    args = parser.parse_args()
    watch.DEBOUNCE_MS, watch.STEP_MS = args.debounce, args.step

    baseline, base_cpu = ([], 0.0) if args.no_baseline else measure_baseline(args)
    got, trace, cpu, threads = measure_dashboard(args)

    print(
        f"watchfiles debounce={args.debounce} ms step={args.step} ms · {args.events} events at "
        f"{args.rate:g}/s · neighbours {args.neighbour}"
        f"{' (same session)' if args.same_session and args.neighbour else ''} · "
        f"{os.cpu_count()} cores · "
        f"load {os.getloadavg()[0]:.1f}"
    )
    if not args.no_baseline:
        print(f"baseline   {figures(baseline)}  cpu {base_cpu:4.0%}  ({len(baseline)} timed)")
    print(f"dashboard  {figures(got)}  cpu {cpu:4.0%}  ({len(got)} timed)")
    busy = sorted(threads.items(), key=lambda item: -item[1])
    print("  cpu by thread: " + ", ".join(f"{name} {share:.0%}" for name, share in busy if share))
    print_breakdown(trace)
    if not got:
        sys.exit(1)


if __name__ == "__main__":
    main()
