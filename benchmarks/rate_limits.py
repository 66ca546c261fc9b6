#!/usr/bin/env python3
"""Provider limits and money (issue 33, docs/harness.md "Provider limits", docs/costs.md).

Six missions run through ``uh-core harness run --jobs 2`` against a scripted model server on
127.0.0.1. Each mission's agent asks the server once per attempt. On ``200`` it makes the fix and
reports the tokens the server said, on a ``uh-usage:`` line. On ``429`` it prints the error, as a
CLI does, and exits 1.

Two runs of the same project, each in a fresh copy:

- **baseline**: the server never refuses;
- **limited**: the server answers ``429`` with ``Retry-After: 3`` to its first two calls.

Printed: each run's wall time and outcomes, the attempts charged and not charged, the extra time
the limits cost (the target is at most 4 s), and the cost table. The ledger's cost per mission
and for the run is compared with one computed by hand from the tokens the server reported and
the prices. Nothing is judged: the figures are the output.

    python3 benchmarks/rate_limits.py
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MISSIONS = [f"m{i}" for i in range(1, 7)]
PRICES = {"bench-model": {"input": 3.0, "output": 15.0, "cache_read": 0.3}}
# the server's usage per call: input (cache reads included), cache reads, output
USAGE = {"input_tokens": 12000, "cache_read_tokens": 8000, "output_tokens": 900}
AGENT = """\
import json, os, pathlib, sys, urllib.error, urllib.request
url = os.environ["BENCH_MODEL_URL"]
try:
    with urllib.request.urlopen(urllib.request.Request(url, data=b"{}"), timeout=30) as reply:
        usage = json.loads(reply.read())["usage"]
except urllib.error.HTTPError as exc:
    after = exc.headers.get("Retry-After")
    sys.stderr.write(f"API error: HTTP 429 Too Many Requests; Retry-After: {after}\\n")
    sys.exit(1)
print("uh-usage: " + json.dumps(usage))
mission = os.environ["MISSION_ID"]
pathlib.Path("done").mkdir(exist_ok=True)
pathlib.Path("done", mission).write_text("done\\n")
"""


class Server(ThreadingHTTPServer):
    refuse_first = 0
    calls = 0
    reported: list[dict[str, object]]
    lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    server: Server

    def do_POST(self) -> None:  # http.server calls it by this name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.server.lock:
            self.server.calls += 1
            refuse = self.server.calls <= self.server.refuse_first
            if not refuse:
                self.server.reported.append({"model": "bench-model", **USAGE})
        if refuse:
            body = b'{"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}'
            self.send_response(429)
            self.send_header("Retry-After", "3")
        else:
            body = json.dumps({"usage": {"model": "bench-model", **USAGE}}).encode()
            self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def project(root: Path, agents: Path) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "bench@example.com")
    git(root, "config", "user.name", "bench")
    for mission in MISSIONS:
        folder = root / ".harness" / "missions" / mission
        folder.mkdir(parents=True)
        (folder / "mission.yaml").write_text(
            f"id: {mission}\nobjective: write done/{mission}\nacceptance_criteria:\n"
            f"  - id: done\n    check_command: test -f done/{mission}\n"
        )
    prices = "".join(
        f"  {name}: {{input: {p['input']}, output: {p['output']}, cache_read: {p['cache_read']}}}\n"
        for name, p in PRICES.items()
    )
    (root / "harness.config.yaml").write_text(
        f"harness_version: 1\nmax_attempts: 1\nisolation_writable: ['{agents}']\n"
        f"agent_env: [BENCH_MODEL_URL]\npricing:\n{prices}"
    )
    subprocess.run(
        [sys.executable, "-m", "uh_core", "init", "--root", str(root)],
        check=True,
        capture_output=True,
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "project")


def by_hand(reported: list[dict[str, object]]) -> float:
    """The run's cost from the server's own figures and the prices: one line, no uh code."""
    total = 0.0
    for usage in reported:
        price = PRICES[str(usage["model"])]
        read = int(str(usage["cache_read_tokens"]))
        plain = int(str(usage["input_tokens"])) - read
        out = int(str(usage["output_tokens"]))
        total += (plain * price["input"] + read * price["cache_read"] + out * price["output"]) / 1e6
    return total


def run(label: str, refuse_first: int, work: Path) -> dict[str, object]:
    server = Server(("127.0.0.1", 0), Handler)
    server.refuse_first, server.reported = refuse_first, []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    root, agents = work / label / "repo", work / label / "agents"
    agents.mkdir(parents=True)
    (agents / "agent.py").write_text(AGENT)
    project(root, agents)
    env_url = f"http://127.0.0.1:{server.server_address[1]}/v1/responses"
    command = [
        sys.executable, "-m", "uh_core", "harness", "run", "--root", str(root), "--jobs", "2",
        "--agent", f"{sys.executable} {agents / 'agent.py'} {{prompt_file}}", "--format", "json",
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "BENCH_MODEL_URL": env_url},
        check=False,
    )
    wall = time.monotonic() - started
    server.shutdown()
    if done.returncode not in (0, 1):
        raise SystemExit(f"{label}: uh-core exited {done.returncode}: {done.stderr.strip()}")
    data = json.loads(done.stdout)
    attempts = [a for r in data["requirements"] for a in r["attempts"]]
    return {
        "wall": wall,
        "outcomes": [r["outcome"] for r in data["requirements"]],
        "charged": sum(1 for a in attempts if a["outcome"] != "rate_limited"),
        "limited": sum(1 for a in attempts if a["outcome"] == "rate_limited"),
        "parked": sum(len(r.get("parked") or []) for r in data["requirements"]),
        "calls": server.calls,
        "ledger_usd": data["usage"]["run"]["cost_usd"],
        "missions_usd": {m: b["cost_usd"] for m, b in data["usage"]["missions"].items()},
        "by_hand_usd": by_hand(server.reported),
        "one_call_usd": by_hand([{"model": "bench-model", **USAGE}]),
    }


def main() -> None:
    if shutil.which("git") is None:
        raise SystemExit("git is needed")
    with tempfile.TemporaryDirectory(prefix="uh-bench-limits-") as tmp:
        work = Path(tmp)
        base = run("baseline", 0, work)
        limited = run("limited", 2, work)
    for label, figures in (("baseline", base), ("limited", limited)):
        passed = figures["outcomes"].count("pass")  # type: ignore[attr-defined]
        print(
            f"{label:8}  wall {figures['wall']:.2f} s  passed {passed}/{len(MISSIONS)}  "
            f"attempts charged {figures['charged']}, rate_limited (not charged) "
            f"{figures['limited']}, parked {figures['parked']}, server calls {figures['calls']}"
        )
    extra = float(limited["wall"]) - float(base["wall"])  # type: ignore[arg-type]
    print(f"limits cost {extra:+.2f} s of wall time (target: at most +4 s)")
    print("cost table (USD):")
    print(f"  one call by hand       {limited['one_call_usd']:.6f}")
    for mission, usd in sorted(limited["missions_usd"].items()):  # type: ignore[attr-defined]
        print(f"  {mission:<22} {usd:.6f}")
    print(
        f"  run, ledger            {limited['ledger_usd']:.6f}\n"
        f"  run, by hand           {limited['by_hand_usd']:.6f}  "
        f"(equal: {abs(float(limited['ledger_usd']) - float(limited['by_hand_usd'])) < 1e-9})"  # type: ignore[arg-type]
    )


if __name__ == "__main__":
    main()
