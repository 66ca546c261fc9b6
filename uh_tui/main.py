"""``uh [--root PATH] [--once [--svg FILE] [--size COLSxROWS]] [--view V] [--mission ID]``
and ``uh demo [DIR]``."""

from __future__ import annotations

import argparse
import gc
import json
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TextIO

ONCE_SIZE = (120, 32)
VIEWS = ("missions", "runtimes", "harness", "sandboxes")
DEMO_MISSION = "divide"
DEMO_AGENT_STEPS = (
    ("reading the mission", 2),
    ("writing tests first: tests/test_divide.py", 3),
    ("implementing divide() in src/calc/core.py", 3),
    ("running the unit tests", 2),
)


def _size(text: str) -> tuple[int, int]:
    """``120x40`` → (120, 40); at least 80×24, the smallest size the dashboard supports."""
    cols, sep, rows = text.lower().partition("x")
    if not sep or not cols.isdigit() or not rows.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: write COLSxROWS, e.g. 120x40")
    if int(cols) < 80 or int(rows) < 24 or int(cols) > 1000 or int(rows) > 1000:
        raise argparse.ArgumentTypeError(f"{text!r}: from 80x24 up to 1000x1000")
    return int(cols), int(rows)


def build_parser() -> argparse.ArgumentParser:
    from uh_core import __version__

    parser = argparse.ArgumentParser(prog="uh", description="Mission Control for uh.")
    parser.add_argument("--version", action="version", version=f"uh {__version__}")
    parser.add_argument("target", nargs="?", choices=["demo"], help="demo: open the demo")
    parser.add_argument("directory", nargs="?", default="uh-demo", help=argparse.SUPPRESS)
    parser.add_argument("--root", metavar="PATH", help="project root (default: found from cwd)")
    parser.add_argument("--once", action="store_true", help="render one frame and exit")
    parser.add_argument("--svg", metavar="FILE", help="with --once: write the frame as SVG")
    parser.add_argument(
        "--size",
        metavar="COLSxROWS",
        type=_size,
        default=None,
        help="with --once: the frame's size (the TypeScript uh's --screenshot-size)",
    )
    parser.add_argument("--view", choices=VIEWS, default="missions", help="the view to open on")
    parser.add_argument("--mission", metavar="ID", help="select this mission at start")
    return parser


def demo_agent(root: Path, *, pace: bool = True) -> str | None:
    """A slow scripted agent for ``uh demo``'s harness run: it prints its progress for a few
    seconds (none without ``pace``), then makes the change the agreeing runtimes made (copied
    from alpha's sandbox, so the run goes green). None when that sandbox is not there."""
    from uh_core.layout import Layout
    from uh_core.sandbox.index import read_index

    try:
        index = read_index(Layout(root))
    except Exception:
        return None
    source = next(
        (s for s in index.sandboxes if s.mission_id == DEMO_MISSION and s.runtime == "alpha"), None
    )
    if source is None:
        return None
    steps = "; ".join(
        f'echo "{text}"; sleep {pause if pace else 0}' for text, pause in DEMO_AGENT_STEPS
    )
    script = (
        f'echo "prompt: $1"; {steps}; '
        'cp "$2/tests/test_divide.py" tests/ && '
        'cp "$2/src/calc/core.py" "$2/src/calc/__init__.py" src/calc/ && '
        'echo "done: tests first, then divide()"'
    )
    worktree = shlex.quote(str(root / source.worktree))
    return f"sh -c {shlex.quote(script)} uh-demo {{prompt_file}} {worktree}"


def build_demo(directory: str, out: TextIO | None = None) -> Path:
    """``uh-core demo DIR`` before the app starts (it takes a few seconds): a progress line
    first, a ticking clock on a terminal, then where it is — never a blank screen."""
    out = sys.stderr if out is None else out
    out.write(f"uh demo: building the demo workspace in {directory} (offline, a few seconds)…\n")
    out.flush()
    started = time.monotonic()
    done = threading.Event()
    ticker = threading.Thread(target=_tick, args=(out, started, done), daemon=True)
    if out.isatty():
        ticker.start()
    try:
        built = subprocess.run(
            [sys.executable, "-m", "uh_core", "demo", directory, "--json"],
            capture_output=True,
            text=True,
        )
    finally:
        done.set()
        if ticker.is_alive():
            ticker.join()
    if built.returncode != 0:
        out.write(built.stderr)
        sys.exit(built.returncode)
    try:
        root = Path(json.loads(built.stdout)["root"])
    except (ValueError, KeyError, TypeError):
        root = Path(directory).resolve()
    out.write(f"uh demo: built {root} in {time.monotonic() - started:.1f} s\n")
    out.flush()
    return root


def _tick(out: TextIO, started: float, done: threading.Event) -> None:
    while not done.wait(0.5):
        out.write(f"\r  {time.monotonic() - started:4.1f} s")
        out.flush()
    out.write("\r\033[K")
    out.flush()


def _check_mission(root: Path, mission: str | None) -> None:
    """``--mission ID`` names a mission of the workspace, or uh says so and exits 2 (as
    ``uh-core`` does), instead of opening on another one."""
    if mission is None:
        return
    from uh_core.layout import Layout

    known = Layout(root).mission_ids()
    if mission not in known:
        listed = ", ".join(known[:10]) + (" …" if len(known) > 10 else "") or "none"
        sys.stderr.write(
            f"uh: error: --mission {mission}: no such mission in {root} (known: {listed})\n"
        )
        sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    from uh_core.proc.sigchld import reap_our_children

    reap_our_children()  # the exit codes of the uh-core runs it launches must be real
    args = build_parser().parse_args(argv)
    from uh_core.layout import find_root
    from uh_tui.launch import Launch, harness_run

    on_start: list[Launch] = []
    if args.target == "demo":
        root = build_demo(args.directory)
        agent = demo_agent(root)
        if agent and not (args.once or args.svg):
            on_start.append(harness_run(root, "--req", DEMO_MISSION, "--agent", agent))
        args.mission = args.mission or DEMO_MISSION
    elif args.root:
        root = Path(args.root).expanduser().resolve()
        if not root.is_dir():
            sys.stderr.write(f"uh: error: --root {args.root}: no such directory\n")
            sys.exit(2)
    else:
        root = find_root()
    _check_mission(root, args.mission)
    from uh_tui.app import UhApp

    # What the imports built lives as long as the process: out of the collector's way, so
    # each full collection walks only what the dashboard makes (a thousand missions' rows).
    gc.freeze()
    if args.svg:
        target = Path(args.svg).expanduser()
        if not target.parent.is_dir():
            sys.stderr.write(f"uh: error: --svg {args.svg}: no such directory {target.parent}\n")
            sys.exit(2)
    if args.once or args.svg:
        app = UhApp(root, once="svg" if args.svg else "text", view=args.view, mission=args.mission)
        size = args.size or ONCE_SIZE
        frame = app.run(headless=True, size=size, auto_pilot=app.snap)  # type: ignore[arg-type]
        if args.svg:
            try:
                Path(args.svg).expanduser().write_text(frame or "", encoding="utf-8")
            except OSError as exc:
                sys.stderr.write(f"uh: error: --svg {args.svg}: {exc.strerror}\n")
                sys.exit(2)
        else:
            sys.stdout.write(frame or "")
        if not (root / ".harness").is_dir():  # the frame says so; a script needs the code
            sys.stderr.write(
                f"uh: error: no .harness/ in {root} (fix: uh-core init --root {root})\n"
            )
            sys.exit(2)
        sys.exit(0)
    UhApp(root, view=args.view, mission=args.mission, on_start=on_start).run()
