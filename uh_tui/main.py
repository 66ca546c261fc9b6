"""``uh [--root PATH] [--once [--svg FILE]]`` and ``uh demo [DIR]``."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ONCE_SIZE = (120, 32)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="uh", description="Mission Control for uh.")
    parser.add_argument("target", nargs="?", choices=["demo"], help="demo: open the demo")
    parser.add_argument("directory", nargs="?", default="uh-demo", help=argparse.SUPPRESS)
    parser.add_argument("--root", metavar="PATH", help="project root (default: found from cwd)")
    parser.add_argument("--once", action="store_true", help="render one frame and exit")
    parser.add_argument("--svg", metavar="FILE", help="with --once: write the frame as SVG")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    from uh_core.layout import find_root

    if args.target == "demo":
        built = subprocess.run(
            [sys.executable, "-m", "uh_core", "demo", args.directory, "--json"],
            capture_output=True,
            text=True,
        )
        if built.returncode != 0:
            sys.stderr.write(built.stderr)
            sys.exit(built.returncode)
        root = Path(args.directory).resolve()
    elif args.root:
        root = Path(args.root).expanduser().resolve()
        if not root.is_dir():
            sys.stderr.write(f"uh: error: --root {args.root}: no such directory\n")
            sys.exit(2)
    else:
        root = find_root()
    from uh_tui.app import UhApp

    if args.once or args.svg:
        app = UhApp(root, once="svg" if args.svg else "text")
        frame = app.run(headless=True, size=ONCE_SIZE)
        if args.svg:
            Path(args.svg).write_text(frame or "", encoding="utf-8")
        else:
            sys.stdout.write(frame or "")
        sys.exit(0)
    UhApp(root).run()
