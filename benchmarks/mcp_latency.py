#!/usr/bin/env python3
"""What does asking uh through MCP cost, against running the same command?

Builds a throw-away git repository with ``uh-core init``, ten missions and one with no
acceptance criteria and no checks (``bench-0``), then, in one run, times:

* baseline: ``uh-core mission list --json`` and ``uh-core verify bench-0 --json`` as
  processes (what a script or an agent without MCP does);
* the ``list_missions`` and ``verify_mission bench-0`` tools on one ``uh-core mcp`` session
  over stdio, through the SDK's own client (what an MCP client does once connected);
* for context, starting a session (spawn + handshake + the tool list).

Figures are medians over interleaved rounds (each round runs every variant once, after one
warm-up round), so load from others on a shared machine falls on both sides alike; each is
printed with its ratio to the CLI baseline of the same operation. This script only
reports: it never fails because a figure is high.

    python benchmarks/mcp_latency.py [--reps 15] [--missions 10] [--huge 2000]

``--huge N`` adds a mission of N trivial criteria, verified once through one server session
(after a 0-criterion verify in another) and once by the CLI: the peak RSS of each against
its 0-criterion run, so a verify that streams (bounded memory) reads about 1x.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import yaml

GIT_ENV = {
    "GIT_AUTHOR_NAME": "uh bench",
    "GIT_AUTHOR_EMAIL": "bench@uh.invalid",
    "GIT_COMMITTER_NAME": "uh bench",
    "GIT_COMMITTER_EMAIL": "bench@uh.invalid",
}
UH_CORE = [sys.executable, "-m", "uh_core"]  # the same interpreter and code the server runs


def build_project(root: Path, missions: int) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*UH_CORE, "init", "--root", str(root)], check=True, capture_output=True)
    for n in range(missions + 1):
        mission_id = "bench-0" if n == 0 else f"listed-{n:02d}"
        mission = {
            "schema_version": "uh.mission.v0",
            "id": mission_id,
            "title": "no criteria" if n == 0 else f"listed mission {n}",
            "acceptance_criteria": []
            if n == 0
            else [{"id": "ok", "description": "trivial", "check_command": "true"}],
        }
        path = root / ".harness" / "missions" / mission_id / "mission.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(mission, sort_keys=False), encoding="utf-8")
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "bench"], cwd=root, check=True, env=env)


def cli_ms(root: Path, *argv: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        [*UH_CORE, *argv, "--json", "--root", str(root)],
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode not in (0, 1):
        sys.exit(f"uh-core {' '.join(argv)} failed: {proc.stderr.decode()}")
    return elapsed


async def measure(root: Path, reps: int) -> dict[str, list[float]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "uh_core", "mcp", "--root", str(root)],
        env=dict(os.environ),
    )
    samples: dict[str, list[float]] = {}

    def keep(name: str, value: float, warm: bool) -> None:
        if not warm:
            samples.setdefault(name, []).append(value)

    async def tool_ms(client: Client, name: str, args: dict[str, str]) -> float:
        start = time.perf_counter()
        result = await client.call_tool(name, args)
        elapsed = (time.perf_counter() - start) * 1000
        if result.is_error:
            sys.exit(f"{name} failed: {result.content}")
        return elapsed

    for round_no in range(reps + 1):
        warm = round_no == 0
        keep("cli list", cli_ms(root, "mission", "list"), warm)
        keep("cli verify", cli_ms(root, "verify", "bench-0"), warm)
        start = time.perf_counter()
        async with Client(params, read_timeout_seconds=600) as client:
            await client.list_tools()
            keep("mcp session start", (time.perf_counter() - start) * 1000, warm)
            keep("mcp list", await tool_ms(client, "list_missions", {}), warm)
            keep(
                "mcp verify",
                await tool_ms(client, "verify_mission", {"mission_id": "bench-0"}),
                warm,
            )
            keep("mcp list again", await tool_ms(client, "list_missions", {}), warm)
    return samples


def report(samples: dict[str, list[float]], missions: int) -> None:
    median = {name: statistics.median(values) for name, values in samples.items()}
    print(f"python {sys.version.split()[0]}  {sys.executable}")
    print(f"{missions + 1} missions; {len(samples['cli list'])} interleaved rounds\n")
    rows = (
        ("uh-core mission list --json (baseline)", "cli list", "cli list"),
        ("list_missions, first call of a session", "mcp list", "cli list"),
        ("list_missions, warm session", "mcp list again", "cli list"),
        ("uh-core verify bench-0 --json (baseline)", "cli verify", "cli verify"),
        ("verify_mission bench-0", "mcp verify", "cli verify"),
        ("session start (spawn, handshake, tool list)", "mcp session start", "cli list"),
    )
    print(f"{'measurement':46s} {'median ms':>10s} {'min ms':>10s} {'vs baseline':>12s}")
    print("-" * 82)
    for label, name, base in rows:
        ratio = median[name] / median[base]
        print(f"{label:46s} {median[name]:10.1f} {min(samples[name]):10.1f} {ratio:11.2f}x")


def add_huge(root: Path, criteria: int) -> None:
    mission = {
        "schema_version": "uh.mission.v0",
        "id": "huge",
        "title": f"{criteria} trivial criteria",
        "acceptance_criteria": [
            {"id": f"ac-{n:05d}", "description": "trivial " * 20, "check_command": "true"}
            for n in range(criteria)
        ],
    }
    path = root / ".harness" / "missions" / "huge" / "mission.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(mission, sort_keys=False), encoding="utf-8")


def _server_pid(root: Path) -> int:
    """The ``uh-core mcp --root ROOT`` process the SDK's client started."""
    wanted = f"mcp\0--root\0{root}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if wanted in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except OSError:
                continue
    sys.exit("the MCP server process was not found")


def _peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cli_peak_mb(root: Path, *argv: str) -> float:
    proc = subprocess.Popen(
        [*UH_CORE, *argv, "--json", "--root", str(root)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    _pid, _status, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1024


async def memory(root: Path) -> dict[str, float]:
    """Peak RSS of one server session verifying ``mission``: bench-0, then huge."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "uh_core", "mcp", "--root", str(root)],
        env=dict(os.environ),
    )  # fmt: skip
    found: dict[str, float] = {}
    for mission in ("bench-0", "huge"):
        async with Client(params, read_timeout_seconds=1800) as client:
            notes = 0

            async def count(_done: float, _total: float | None, _msg: str | None) -> None:
                nonlocal notes
                notes += 1

            result = await client.call_tool(
                "verify_mission", {"mission_id": mission}, progress_callback=count
            )
            if result.is_error:
                sys.exit(f"verify {mission} failed: {result.content}")
            found[f"mcp {mission}"] = _peak_mb(_server_pid(root))
            found[f"notes {mission}"] = notes
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--missions", type=int, default=10)
    parser.add_argument(
        "--huge", type=int, default=2000,
        help="also verify a mission of this many criteria through MCP and the CLI: peak RSS "
        "against a 0-criterion verify (0: skip)",
    )  # fmt: skip
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="uh-mcp-bench-") as folder:
        root = Path(folder) / "project"
        os.environ.setdefault("UH_STATE_DIR", str(Path(folder) / "state"))
        build_project(root, args.missions)
        samples = anyio.run(measure, root, args.reps)
        report(samples, args.missions)
        if args.huge:
            add_huge(root, args.huge)
            peaks = anyio.run(memory, root)
            cli_small = cli_peak_mb(root, "verify", "bench-0")
            cli_huge = cli_peak_mb(root, "verify", "huge")
            print(f"\nverify of {args.huge} criteria, peak RSS (MB), against a 0-criterion verify:")
            print(f"  mcp server  {peaks['mcp bench-0']:7.1f} -> {peaks['mcp huge']:7.1f}  "
                  f"({peaks['mcp huge'] / peaks['mcp bench-0']:.2f}x; "
                  f"{int(peaks['notes huge'])} progress notifications)")  # fmt: skip
            print(f"  uh-core cli {cli_small:7.1f} -> {cli_huge:7.1f}  "
                  f"({cli_huge / cli_small:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
