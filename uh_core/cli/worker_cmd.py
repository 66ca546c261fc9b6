"""``uh-core worker``: join (or start) a Ray cluster advertising this machine's runtimes."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess

from uh_core.cli.common import EXIT_OK, add_json, print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "worker",
        help="make this machine a Ray node advertising the runtimes installed here, with "
        "Ray's token authentication (for --executor ray; docs/scale.md)",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--address", metavar="HOST:PORT", help="the cluster's head to join")
    where.add_argument("--head", action="store_true", help="start a new cluster's head here")
    parser.add_argument("--port", type=int, default=None, help="--head: the head's port")
    parser.add_argument("--runtimes", metavar="A,B", help="advertise these (each checked)")
    parser.add_argument("--cpus", type=int, default=None, help="CPUs for jobs on this node")
    parser.add_argument("--block", action="store_true", help="stay in the foreground")
    parser.add_argument("--dry-run", action="store_true", help="print the ray command only")
    parser.add_argument("--root", metavar="PATH", default=None, help="a workspace's manifests")
    add_json(parser)
    parser.set_defaults(handler=handle_worker)


def handle_worker(args: argparse.Namespace) -> int:
    from pathlib import Path

    from uh_core.distributed.worker import offer, start_env
    from uh_core.layout import Layout, find_root

    root = Path(args.root) if args.root else find_root()
    layout = Layout(root) if (root / ".harness").is_dir() else None
    wanted = [r.strip() for r in args.runtimes.split(",") if r.strip()] if args.runtimes else None
    found = offer(
        layout, args.address, head=args.head, port=args.port, wanted=wanted, cpus=args.cpus,
        block=args.block,
    )  # fmt: skip
    found.env = start_env(args.head, dry_run=args.dry_run)  # the token's file, never the token
    if args.json:
        print_json(found.as_dict())
    else:
        print(f"advertising: {', '.join(found.runtimes) or 'no runtime (only --agent jobs)'}")
        for runtime, why in sorted(found.missing.items()):
            print(f"  not here: {runtime}: {why}")
        print("command: " + shlex.join([*(f"{k}={v}" for k, v in found.env.items()), *found.argv]))
    if args.dry_run:
        return EXIT_OK
    return subprocess.call(found.argv, env={**os.environ, **found.env})
