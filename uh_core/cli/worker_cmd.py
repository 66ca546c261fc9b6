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
    pool = parser.add_mutually_exclusive_group()
    pool.add_argument(
        "--no-pool",
        action="store_true",
        help="start no warm service pool on this node (runs start their own)",
    )
    pool.add_argument(
        "--pool-only",
        action="store_true",
        help="with --address: make this node's warm service pool (one detached "
        "worker per CPU, reused by every run) on a node already started",
    )
    pool.add_argument(
        "--stop-pool",
        action="store_true",
        help="with --address: end the warm service pool (this node's with "
        "--node, else every node's)",
    )
    parser.add_argument(
        "--node",
        metavar="NODE_ID",
        default=None,
        help="--pool-only/--stop-pool: the node (default: this machine's)",
    )
    parser.add_argument("--root", metavar="PATH", default=None, help="a workspace's manifests")
    add_json(parser)
    parser.set_defaults(handler=handle_worker)


def handle_worker(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.pool_only or args.stop_pool:
        return _pool(args)

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
    env = {**os.environ, **found.env}
    if args.no_pool:
        return subprocess.call(found.argv, env=env)
    if not args.block:
        code = subprocess.call(found.argv, env=env)
        if code == 0:
            _start_pool(args, env, None)
        return code
    node = subprocess.Popen(found.argv, env=env)
    _start_pool(args, env, node)
    return node.wait()


def _pool(args: argparse.Namespace) -> int:
    from uh_core.distributed.worker import start_pool, stop_pool
    from uh_core.errors import UsageError

    if args.address is None:
        raise UsageError("--pool-only and --stop-pool need --address HOST:PORT")
    if args.stop_pool:
        names = stop_pool(args.address, args.node)
    else:
        names = start_pool(args.address, args.node)
    if args.json:
        print_json({"pool": names, "stopped": bool(args.stop_pool)})
    else:
        print(f"{'stopped' if args.stop_pool else 'warm'}: {', '.join(names) or 'no slot'}")
    return EXIT_OK


def _start_pool(
    args: argparse.Namespace, env: dict[str, str], node: subprocess.Popen[bytes] | None
) -> None:
    """This node's warm service pool, once its raylet is up (``--pool-only`` in a process
    of its own, retried while the node starts). A node without one still works: each run
    then starts slots of its own."""
    import sys
    import time

    from uh_core.cli.common import warn

    address = args.address or "auto"
    argv = [sys.executable, "-m", "uh_core", "worker", "--address", address, "--pool-only"]
    deadline = time.monotonic() + 180
    said = ""
    while time.monotonic() < deadline and (node is None or node.poll() is None):
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode == 0:
            print(done.stdout.strip(), flush=True)
            return
        said = (done.stderr.strip().splitlines() or [""])[-1]
        if node is None:
            break
        time.sleep(2)
    warn(f"no warm service pool on this node ({said or 'the node stopped'}): runs start "
         f"their own workers; `uh-core worker --address ADDR --pool-only` retries")  # fmt: skip
